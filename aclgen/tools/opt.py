"""`aclgen opt`: xDSL's xdsl-opt driver with our dialects and passes registered.

Everything on the command line (`-p`, `--split-input-file`, `--verify-diagnostics`,
`--print-between-passes`, `--time-passes`, `--print-op-generic`, `-o`, ...) is xDSLOptMain's own
argument parsing; this module adds the registrations and one change of policy: a failure is one
line for the user, never a traceback. Parse, verifier and pass failures become `OptDiagnostic`
(`FILE:LINE:COL: error: ...`, or `FILE: error: [in pass P: ]...` where the IR has no location),
and `--verify-diagnostics` prints that line instead of raising, parse errors included, then exits 0.
A bad pipeline, an unreadable input or an unwritable output is an `OptError`. The caller
(aclgen.cli) decides how to print them.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Sequence
from typing import IO

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError, ShrinkException
from xdsl.xdsl_opt_main import xDSLOptMain

from aclgen.passes import pipeline

DESCRIPTION = (
    "xdsl-opt with aclgen's dialects (ew, tile, llvmx) and passes registered next to xDSL's own: "
    "parse IR, run a pass pipeline, print the result. With no input_file, or -, it reads stdin."
)


class OptError(Exception):
    """A mistake on the command line (bad pipeline, unreadable input); one line for the user."""


class OptDiagnostic(OptError, DiagnosticException):
    """An error in the input IR or raised by a pass, already formatted as one line
    (`FILE:LINE:COL: error: ...`). A DiagnosticException, so that xDSLOptMain.run prints it
    under --verify-diagnostics."""


def _one_line(exc: BaseException | str) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return " ".join(lines) or type(exc).__name__


def _pipeline_error(exc: BaseException) -> str:
    """ArgSpecParseError's text is a header, `pass-pipeline:1:COL`, the spec, a caret and the message."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    where = [ln for ln in lines if ln.startswith("pass-pipeline:")]
    if isinstance(exc, ArgSpecParseError) and where:
        return f"column {where[0].rsplit(':', 1)[1]}: {lines[-1]}"
    return _one_line(exc)


class AclgenOptMain(xDSLOptMain):
    """xDSLOptMain plus aclgen's dialects and passes, with failures raised as OptError/OptDiagnostic."""

    version_format = "aclgen opt (xdsl-opt) built from xdsl version {xdsl_version}"

    # Where a pipeline failure happened, set by the callback around xDSL's (which verifies).
    _checking: ModulePass | None = None  # verifying this pass's output (None: the input)
    _running: ModulePass | None = None  # applying this pass

    def __init__(self, args: Sequence[str]):
        super().__init__(description=DESCRIPTION, args=list(args))

    # -- registration --------------------------------------------------------------------------

    def register_all_dialects(self) -> None:
        super().register_all_dialects()  # every upstream dialect, loaded lazily
        known = set(self.ctx.registered_dialect_names)
        for dialect in pipeline.context().loaded_dialects:  # ours, plus the upstream ones we use
            if dialect.name not in known:
                self.ctx.register_dialect(dialect.name, lambda d=dialect: d)

    def register_all_passes(self) -> None:
        super().register_all_passes()
        for name, factory in pipeline.PASSES.items():
            self.register_pass(name, factory)

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        arg_parser.prog = "aclgen opt"  # xDSLOptMain builds the parser; it would say `cli.py`
        super().register_all_arguments(arg_parser)

    # -- input and output ----------------------------------------------------------------------

    def get_input_stream(self) -> tuple[IO[bytes], str]:
        if self.args.input_file in (None, "-"):
            return sys.stdin.buffer, "mlir"
        try:
            return super().get_input_stream()
        except OSError as exc:
            raise OptError(f"cannot read {self.args.input_file}: {exc.strerror or exc}") from exc

    def get_input_name(self) -> str:
        return "<stdin>" if self.args.input_file in (None, "-") else self.args.input_file

    def prepare_input(self) -> tuple[list[tuple[IO[bytes], int]], str]:
        try:
            return super().prepare_input()
        except ValueError as exc:  # an extension no frontend claims
            raise OptError(f"{exc}; name the frontend with -f ({', '.join(self.available_frontends)})") from exc

    def prepare_output(self) -> IO[str]:
        try:
            return super().prepare_output()
        except OSError as exc:
            raise OptError(f"cannot write {self.args.output_file}: {exc.strerror or exc}") from exc

    # -- failures as one-line diagnostics ------------------------------------------------------

    def setup_pipeline(self) -> None:
        try:
            super().setup_pipeline()
        except (ValueError, ArgSpecParseError) as exc:  # ArgSpecParseError is a BaseException
            raise OptError(f"bad pass pipeline {self.args.passes!r}: {_pipeline_error(exc)}") from exc
        xdsl_callback = self.pipeline.callback
        assert xdsl_callback is not None

        def callback(previous: ModulePass | None, module: ModuleOp, following: ModulePass | None) -> None:
            self._checking, self._running = previous, None
            xdsl_callback(previous, module, following)  # verifies, prints between passes, times
            self._running = following

        self.pipeline = dataclasses.replace(self.pipeline, callback=callback)

    def parse_chunk(self, chunk: IO[bytes], file_extension: str, start_offset: int = 0) -> ModuleOp | None:
        try:
            return super().parse_chunk(chunk, file_extension, start_offset)
        except ParseError as exc:
            if self.args.parsing_diagnostics:
                raise  # xDSLOptMain.run prints it its own way
            exc.span = dataclasses.replace(exc.span, line_offset=start_offset)
            raise OptDiagnostic(f"{exc.span.get_location()}: error: {_one_line(exc.msg)}") from exc

    def apply_passes(self, prog: ModuleOp) -> None:
        self._checking = self._running = None
        try:
            super().apply_passes(prog)
        except ShrinkException:
            raise
        except Exception as exc:
            if self._running is not None:
                message = _one_line(exc)
                if not message.startswith(f"in pass {self._running.name}:"):  # ours name themselves
                    if not isinstance(exc, DiagnosticException):
                        message = f"{type(exc).__name__}: {message}"
                    message = f"in pass {self._running.name}: {message}"
            elif self._checking is not None:
                message = f"in pass {self._checking.name}: the output does not verify: {_one_line(exc)}"
            else:
                message = _one_line(exc)  # the input does not verify
            raise OptDiagnostic(f"{self.get_input_name()}: error: {message}") from exc


def main(argv: Sequence[str]) -> int:
    """Run `aclgen opt` on `argv` (the arguments after `opt`). Returns 0, or raises OptError,
    OptDiagnostic or SystemExit (argparse: usage errors, --help, --version; --shrink)."""
    AclgenOptMain(argv).run()
    return 0
