"""The clinics' data both servers answer from, and the six calls made to each."""

from __future__ import annotations

from typing import Any, Final

CLINICS: Final = ("north", "south")
SPECIES: Final = ("dog", "cat", "rabbit", "parrot")
NAMES: Final = ("Rex", "Mia", "Bun", "Kiwi", "Odin", "Luna", "Pip", "Zazu", "Milo", "Nala")
DESCRIPTIONS: Final = {
    "list_pets": "The pets registered at a clinic.",
    "get_pet": "One pet by id, with its vaccinations.",
    "list_appointments": "A clinic's appointments on a day.",
    "book_visit": "Book a visit for a pet on a day.",
}
RULE: Final = "weight_kg is in kilograms; dates are the clinic's local YYYY-MM-DD."


def pets() -> list[dict[str, Any]]:
    """Ten pets per clinic, the same every run."""
    return [
        {
            "id": f"{clinic[0]}-{n + 1:02d}",
            "clinic": clinic,
            "name": NAMES[n],
            "species": SPECIES[(n + c) % len(SPECIES)],
            "owner": f"Owner {c * 10 + n + 1}",
            "weight_kg": round(2.5 + ((n * 7 + c * 3) % 30) * 1.1, 1),
            "vaccinated": (n + c) % 3 != 0,
        }
        for c, clinic in enumerate(CLINICS)
        for n in range(len(NAMES))
    ]


def appointments(clinic: str, day: str) -> list[dict[str, Any]]:
    """A clinic's appointments on ``day``: one every hour from nine, for six of its pets."""
    mine = [pet for pet in pets() if pet["clinic"] == clinic][:6]
    return [
        {"time": f"{day}T{9 + n:02d}:00", "pet_id": pet["id"], "reason": "check-up"}
        for n, pet in enumerate(mine)
    ]


def pet(pet_id: str) -> dict[str, Any] | None:
    """The pet ``pet_id``, with its vaccinations; ``None`` if no pet has that id."""
    for found in pets():
        if found["id"] == pet_id:
            vaccines = ["rabies", "distemper"] if found["vaccinated"] else []
            return {**found, "vaccines": vaccines}
    return None


SIX_CALLS: Final[tuple[tuple[str, dict[str, Any]], ...]] = (
    ("list_pets", {"clinic": "north"}),
    ("list_pets", {"clinic": "south"}),
    ("get_pet", {"pet_id": "n-03"}),
    ("list_appointments", {"clinic": "south", "day": "2026-03-02"}),
    ("book_visit", {"pet_id": "n-03", "day": "2026-03-02"}),
    ("get_pet", {"pet_id": "n-04"}),
)
"""The calls, by action (a FastMCP tool each; an action of the ``clinic`` tool in mcpfusion)."""
