"""Reading a provider's answers: token_answer, GitHub's token answer shapes among them."""

from __future__ import annotations

import pytest

from mcpfusion._auth.signin.provider import token_answer, upstream_of

FORM = "application/x-www-form-urlencoded; charset=utf-8"


def test_a_form_encoded_github_answer_reads_as_json_with_spaced_scopes() -> None:
    """GitHub's default answer (form-encoded, ``scope`` comma-separated) reads as the JSON
    one, with the scopes space-separated as RFC 6749 §3.3 has them."""
    answer = token_answer(FORM, "access_token=gho_abc&scope=repo%2Cgist&token_type=bearer")
    assert answer == {"access_token": "gho_abc", "scope": "repo gist", "token_type": "bearer"}


def test_a_json_github_answer_has_its_commas_spaced_too() -> None:
    """With ``Accept: application/json`` GitHub still separates scopes with commas."""
    answer = token_answer(
        "application/json; charset=utf-8",
        '{"access_token": "gho_abc", "scope": "read:user,user:email", "token_type": "bearer"}',
    )
    assert answer["scope"] == "read:user user:email"


def test_a_classic_oauth_apps_token_has_no_expiry() -> None:
    """No ``expires_in`` (a classic OAuth app's token): the kept token has no expiry."""
    kept = upstream_of(token_answer(FORM, "access_token=gho_abc&scope=&token_type=bearer"))
    assert kept == {"access_token": "gho_abc"}


def test_an_expiring_github_app_token_has_its_numbers_as_ints() -> None:
    """A GitHub App's expiring user token, form-encoded, gives int lifetimes and keeps
    the refresh token."""
    answer = token_answer(
        FORM,
        "access_token=ghu_a&expires_in=28800&refresh_token=ghr_b"
        "&refresh_token_expires_in=15811200&scope=&token_type=bearer",
    )
    assert answer["expires_in"] == 28800 and answer["refresh_token_expires_in"] == 15811200
    kept = upstream_of(answer)
    assert kept["refresh_token"] == "ghr_b" and isinstance(kept["expires_at"], int)


def test_an_error_answer_reads_with_its_error_field() -> None:
    """GitHub's refusal (200, form-encoded) reads with ``error``, which the caller refuses."""
    answer = token_answer(FORM, "error=bad_verification_code&error_description=The+code")
    assert answer["error"] == "bad_verification_code"


def test_lists_pass_and_neither_json_nor_form_is_refused() -> None:
    """A JSON list (GitHub's /user/emails) is read as is; a body of neither kind is refused."""
    assert token_answer("application/json", '[{"email": "a@b"}]') == [{"email": "a@b"}]
    with pytest.raises(ValueError, match="Expecting value"):
        token_answer("text/html", "<html>")
    with pytest.raises(ValueError, match="bad query field"):
        token_answer(FORM, "no-equals-sign")
