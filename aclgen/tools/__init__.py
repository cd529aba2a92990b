"""The CLI's harnesses: tools that `aclgen` subcommands hand their arguments to."""


class UsageError(Exception):
    """A mistake on the command line or in an input file; printed as one line, no traceback."""
