"""Keys of the dicts that nodes, rels and paths are returned as."""

from ._warren import DST, ID, LABEL, NODES, RELS, SRC

__all__ = ["DST", "ID", "LABEL", "NODES", "RELS", "SRC"]
