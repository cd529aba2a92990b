"""The operator reference (`aclgen docs`, docs/operators/): current with the registry, complete
for CANN's activation doc pages, and pointing at nothing outside the repository.

The pages are generated once per module (every operator's example runs: a few seconds on a
warm compile cache) and compared with the committed ones.
"""

from __future__ import annotations

import re

import pytest

import aclgen.ops
from aclgen.ops import catalog
from aclgen.ops.activation import OUT_OF_SCOPE
from aclgen.tools import docs
from tests import ROOT, runners

REFERENCE = ROOT / "docs" / "operators"
REGENERATE = "aclgen docs"


@pytest.fixture(scope="module")
def generated() -> dict[str, str]:
    return docs.pages()


def test_the_committed_reference_is_current(generated):
    stale = docs.stale(REFERENCE, generated)
    assert not stale, (
        f"docs/operators/ does not match the operator registry: {', '.join(stale)}. "
        f"Run `{REGENERATE}` in the checkout (or `python -m aclgen.cli docs`) and commit docs/operators/.")


def test_every_example_ran(generated):
    failed = docs.failed_examples(generated)
    assert not failed, f"the generated example of {failed} failed (the page says why): declare examples="


def test_one_page_per_builtin_and_an_index(generated):
    names = {f"{op.api}.md" for op in aclgen.ops.OPERATORS.values()}
    assert set(generated) == names | {"README.md"}


@pytest.mark.parametrize("section", ["## C API", "## Parameters", "## Dtypes", "## Checks and status codes",
                                     "## Formula", "## Reference and bound", "## Example"])
def test_every_page_has_every_section(generated, section):
    missing = [name for name, text in generated.items() if name != "README.md" and f"\n{section}\n" not in text]
    assert not missing, f"{section} missing from {missing}"


def test_pages_point_at_nothing_outside_the_repository(generated):
    for name, text in generated.items():
        for outside in ("SPEC.md", "SPEC §", "DESIGN.md", "C_API.md", "STYLE.md", "/work/", str(ROOT)):
            assert outside not in text, f"{name} mentions {outside}"
        for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):
            if not target.startswith(("http://", "https://")) and target not in generated:
                assert (REFERENCE / target).resolve().exists(), f"{name} links to {target}, which does not exist"


def test_a_page_shows_both_phases_and_the_in_place_api(generated):
    text = generated["aclnnRelu.md"]
    assert '#include "aclnnop/aclnn_relu.h"' in text
    for declaration in ("aclnnStatus aclnnReluGetWorkspaceSize(\n    const aclTensor* self,\n    aclTensor* out,\n",
                        "aclnnStatus aclnnRelu(\n    void* workspace,",
                        "aclnnStatus aclnnInplaceReluGetWorkspaceSize(\n    aclTensor* selfRef,\n"):
        assert declaration in text
    assert "| `self` | `self` | input tensor | `const aclTensor*` |" in text


def test_the_example_ran_and_its_output_is_on_the_page(generated):
    text = generated["aclnnRelu.md"]
    example = text.split("## Example", 1)[1]
    assert "print(ops.relu(" in example
    assert re.search(r"```text\n\[\[0\. +0\. *\]\n \[2\.5 +0\. *\]\]\n```", example), example


def test_the_index_gives_every_activation_api_a_status(generated):
    index = generated["README.md"]
    rows = {m[1]: m[2] for m in re.finditer(r"^\| `?\[?(aclnn\w+)[^|]*\| `\w+` \| ([^|]+) \|", index, re.M)}
    assert set(catalog.activation_apis()) <= set(rows)
    for api, reason in OUT_OF_SCOPE.items():
        assert rows[api].startswith("out of scope: " + reason[:40]), api
    for op in aclgen.ops.OPERATORS.values():
        if op.api in rows:
            assert rows[op.api].startswith(f"provided: [{op.api}]({op.api}.md)"), op.api
        if op.inplace and op.inplace_api in rows:
            assert rows[op.inplace_api].startswith("provided: in place"), op.inplace_api


def test_the_catalog_is_the_doc_pages():
    apis = catalog.activation_apis()
    assert len(catalog.ACTIVATION) == 72 and len(apis) == 85 == len(set(apis))
    assert sum(api.startswith("aclnnInplace") for api in apis) == 13
    assert set(OUT_OF_SCOPE) <= set(apis)
    assert catalog.HEADERS["aclnnGeGluV3"] == "aclnn_geglu.h" and catalog.HEADERS["aclnnInplaceRelu"] == "aclnn_relu.h"


def test_example_outputs_compare_to_a_percent_and_the_rest_exactly():
    page = "# x\n\nsome text 1.5\n\n```text\n[[0.1234567 2.       ]]\n```\n"
    assert docs.same_page(page, page.replace("0.1234567 2.       ", "0.12345671 2."))
    assert not docs.same_page(page, page.replace("0.1234567", "0.2"))
    assert not docs.same_page(page, page.replace("text 1.5", "text 1.50001"))
    assert not docs.same_page(page, page.replace("[[", "[[[").replace("]]", "]]]"))


def test_check_names_stale_pages_and_the_command(generated, tmp_path):
    written, removed = docs.write(tmp_path, generated)
    assert removed == [] and len(written) == len(generated)
    assert docs.stale(tmp_path, generated) == []
    (tmp_path / "aclnnRelu.md").write_text("edited\n")
    (tmp_path / "aclnnGone.md").write_text("an operator that was removed\n")
    assert docs.stale(tmp_path, generated) == ["aclnnRelu.md (differs)", "aclnnGone.md (no such operator)"]
    r = runners.aclgen("docs", "--check", "--out", str(tmp_path))
    assert r.returncode == 1, r.stdout + r.stderr
    assert f"stale: {tmp_path / 'aclnnRelu.md'}" in r.stdout and "run `aclgen docs`" in r.stdout
    assert docs.write(tmp_path, generated)[1] == ["aclnnGone.md"]
    assert docs.stale(tmp_path, generated) == []
