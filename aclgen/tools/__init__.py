"""The CLI's harnesses: tools that `aclgen` subcommands hand their arguments to."""


class UsageError(Exception):
    """A mistake on the command line or in an input file; printed as one line, no traceback."""


def count(n: int, noun: str, plural: str | None = None) -> str:
    """`1 variant`, `3 variants` (`plural` where adding an s is wrong: entry, entries)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"
