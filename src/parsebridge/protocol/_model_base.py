"""How the protocol's models are laid out, under their fields.

`_Model` is the `BaseModel` base of the results and `ToolCall`; `_SlottedModel` gives the
small models made on the hot path (`ReasoningBlock`, `ToolCallDelta`, `StreamDelta`, slotted
pydantic dataclasses) the everyday `BaseModel` surface. Both admit the fast construction of
`models` (`_alloc`, a store per field, no validation): a `_Model` so built reads pydantic's
bookkeeping slots through `_Model.__getattr__`.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict, TypeAdapter

if TYPE_CHECKING:
    from pydantic.fields import FieldInfo

#: An instance without `__init__`: the fast construction's first step.
_alloc = object.__new__


class _Model(BaseModel):
    # defer_build: the validator (and pydantic's plugin scan) is built on first
    # validation, not at import — `import parsebridge` stays cheap.
    model_config = ConfigDict(extra="forbid", frozen=False, defer_build=True)

    if not TYPE_CHECKING:

        def __getattr__(self, item: str) -> Any:
            # Models built by the fast `fill_fields` (`make_tool_call`, the other `make_*`) set only `__dict__`;
            # pydantic's three bookkeeping slots read as what they would hold: every field
            # set (one shared set per class), no extra fields (forbidden), no private state
            # (none is declared). Only reached when a slot is unset; validated models never are.
            if item == "__pydantic_fields_set__":
                return _all_fields_set(type(self))
            if item == "__pydantic_extra__" or item == "__pydantic_private__":
                return None
            return super().__getattr__(item)


class _SlottedModel:
    """`BaseModel`'s everyday surface for the small models made on the hot path.

    `ToolCallDelta` and `StreamDelta` are made once per chunk and
    `ReasoningBlock` once per parse, so they are slotted pydantic dataclasses:
    a slot store costs a fraction of a model's `__dict__`, and no dict is made
    per object. Validation, JSON and schema come from pydantic as for the other
    models; these methods give them the names callers of a `BaseModel` use.
    """

    __slots__ = ()

    @classmethod
    def _adapter(cls) -> TypeAdapter[Any]:
        adapter = _ADAPTERS.get(cls)
        if adapter is None:
            adapter = _ADAPTERS[cls] = TypeAdapter(cls)
        return adapter

    @classmethod
    def model_validate(cls, obj: Any) -> Self:
        return cls._adapter().validate_python(obj)  # type: ignore[no-any-return]

    @classmethod
    def model_validate_json(cls, data: str | bytes) -> Self:
        return cls._adapter().validate_json(data)  # type: ignore[no-any-return]

    @classmethod
    def model_json_schema(cls, **kwargs: Any) -> dict[str, Any]:
        return cls._adapter().json_schema(**kwargs)

    def model_dump(self, **kwargs: Any) -> dict[str, Any]:
        return self._adapter().dump_python(self, **kwargs)  # type: ignore[no-any-return]

    def model_dump_json(self, **kwargs: Any) -> str:
        return self._adapter().dump_json(self, **kwargs).decode()

    def model_copy(self, *, update: dict[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy (not validated, as `BaseModel.model_copy`); `update` replaces fields."""
        clone = _alloc(type(self))
        for name in self.model_fields:
            setattr(clone, name, getattr(self, name))
        if deep:
            clone = copy.deepcopy(clone)
        for name, value in (update or {}).items():
            if name not in self.model_fields:
                raise AttributeError(f"{type(self).__name__} has no field {name!r}")
            setattr(clone, name, value)
        return clone

    @property
    def model_fields_set(self) -> set[str]:
        return set(self.model_fields)

    @property
    def model_extra(self) -> None:
        return None  # extra fields are forbidden

    if TYPE_CHECKING:
        model_fields: ClassVar[dict[str, FieldInfo]]


_ADAPTERS: dict[type, TypeAdapter[Any]] = {}
# defer_build: the validator is built on first validation, not at import.
_SLOTTED_CONFIG = ConfigDict(extra="forbid", defer_build=True)


#: One "fields set" per class, shared: every field is set, so pydantic's `.add(name)` on
#: assignment never changes it (extra fields are forbidden).
_ALL_SET: dict[type, set[str]] = {}


def _all_fields_set(cls: type) -> set[str]:
    fields_set = _ALL_SET.get(cls)
    if fields_set is None:
        fields_set = _ALL_SET[cls] = set(cls.model_fields)  # type: ignore[attr-defined]
    return fields_set
