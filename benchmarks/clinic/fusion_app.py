"""The two-clinic server as a new mcpfusion user writes it: Presenters, a rule, a suggestion."""

from __future__ import annotations

from pydantic import BaseModel

from benchmarks.clinic import data
from mcpfusion import Fusion, Presenter, Suggestion, ToolError


class Pet(BaseModel):
    """A pet as a clinic's list shows it."""

    id: str
    clinic: str
    name: str
    species: str
    owner: str
    weight_kg: float
    vaccinated: bool


class PetRecord(Pet):
    """One pet with its vaccinations."""

    vaccines: list[str]


class Appointment(BaseModel):
    """A visit booked at a clinic."""

    time: str
    pet_id: str
    reason: str


pet_list = Presenter("Pet", Pet, rules=[data.RULE])
pet_view = Presenter("PetRecord", PetRecord, rules=[data.RULE])
appointment_view = Presenter("Appointment", Appointment)


@pet_view.suggest
def book_next(pet: dict[str, object]) -> Suggestion | None:
    """Unvaccinated pets need a visit."""
    if not pet["vaccinated"]:
        return Suggestion("clinic.book_visit", "Book a vaccination visit")
    return None


app = Fusion("clinic")
clinic = app.tool("clinic", description="Pets and appointments of the north and south clinics.")


@clinic.action(returns=pet_list, read_only=True, description=data.DESCRIPTIONS["list_pets"])
def list_pets(clinic: str) -> list[dict[str, object]]:
    return [pet for pet in data.pets() if pet["clinic"] == clinic]


@clinic.action(returns=pet_view, read_only=True, description=data.DESCRIPTIONS["get_pet"])
def get_pet(pet_id: str) -> dict[str, object]:
    found = data.pet(pet_id)
    if found is None:
        raise ToolError("NOT_FOUND", f"No pet {pet_id}.", recovery="List the clinic's pets.")
    return found


@clinic.action(
    returns=appointment_view, read_only=True, description=data.DESCRIPTIONS["list_appointments"]
)
def list_appointments(clinic: str, day: str) -> list[dict[str, object]]:
    return data.appointments(clinic, day)


@clinic.action(description=data.DESCRIPTIONS["book_visit"])
def book_visit(pet_id: str, day: str) -> str:
    return f"Booked {pet_id} on {day} at 09:00."
