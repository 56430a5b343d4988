"""The pydantic releases and `BaseModel` layout that `models`' fast construction relies on.

`models` builds results without validation by storing a model's fields through
BaseModel's ``__dict__`` slot (its "hot path" section says why). That is only
correct on the pydantic releases it was tested with and while BaseModel keeps
that layout: the checks live here, `models` runs them once at import.
"""

from __future__ import annotations

from typing import Any

from pydantic import VERSION as PYDANTIC_VERSION
from pydantic import BaseModel

#: The pydantic releases the fast `fill_fields` was written and tested against (pyproject:
#: ``pydantic>=2.6,<3``); another release is an ImportError that says so (see `check_pydantic`).
FAST_PYDANTIC = ((2, 6), (3, 0))
#: The `BaseModel` instance layout the fast path relies on: field values in `__dict__` (stored
#: through the slot's descriptor) and three bookkeeping slots it leaves unset, which
#: `_Model.__getattr__` answers for.
BASEMODEL_SLOTS = ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__")


def _tested_release(version: str) -> bool:
    try:
        release = tuple(int(part) for part in version.split(".")[:2])
    except ValueError:
        return False
    return FAST_PYDANTIC[0] <= release < FAST_PYDANTIC[1]


def check_pydantic(version: str = PYDANTIC_VERSION) -> None:
    """Import-time check: `version` is a pydantic release this module was tested with."""
    if not _tested_release(version):
        low, high = (".".join(map(str, r)) for r in FAST_PYDANTIC)
        raise ImportError(
            f"parsebridge needs pydantic>={low},<{high} (its result objects are built without "
            f"validation in a way tested only there); found pydantic {version!r}: "
            f"pip install 'pydantic>={low},<{high}'"
        )


def fast_construction_supported(version: str = PYDANTIC_VERSION, base: type = BaseModel) -> bool:
    """Whether `version` is a release the fast path was written for and `base` has its layout."""
    if not _tested_release(version):
        return False
    descriptor = base.__dict__.get("__dict__")
    return getattr(base, "__slots__", None) == BASEMODEL_SLOTS and hasattr(descriptor, "__set__")


def init_fields(model: BaseModel, fields: dict[str, Any]) -> None:
    """The fallback `fill_fields`: pydantic's normal construction (validation) of the allocated model."""
    model.__init__(**fields)  # type: ignore[misc]
