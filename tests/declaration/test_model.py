"""The declaration model: attributes, CANN's argument order, optional arguments, channel
broadcast, per-output dtypes and reductions, each through the Python call, aclnn and the C
header. (The operators are the suite's own: SuiteXxx.)"""

import textwrap

import ml_dtypes
import numpy as np
import pytest

import aclgen
import aclgen.acl as acl
import aclgen.aclnn as aclnn
import aclgen.ops
from aclgen import Attr, Scalar, Tensor
from aclgen.capi import abi, headers
from aclgen.declaration import unregister
from tests import runners

F32 = np.float32
NULL, INVALID = 161001, 161002


@pytest.fixture(scope="module")
def ops():
    made = []

    def declare(name, **kw):
        def wrap(formula):
            fn = aclgen.operator(name, **kw)(formula)
            made.append(name)
            return fn
        return wrap

    @declare("SuiteSoftmaxBackward", inputs=("gradOutput", "output"), attrs=(Attr("dim", "int64"),),
             outputs=("gradInput",), broadcast=False, order=("gradOutput", "output", "dim", "gradInput"))
    def suite_softmax_backward(g, y, dim):
        return y * (g - aclgen.sum(g * y, dim))

    @declare("SuiteGeluV2", inputs=("self",), attrs=(Attr("approximate", "str", default="none",
                                                           choices=("none", "tanh")),), outputs=("out",))
    def suite_gelu_v2(x, approximate):
        if approximate == "tanh":
            k = 0.7978845608028654 * (x + 0.044715 * x * x * x)
            return x * aclgen.sigmoid(2.0 * k)
        return 0.5 * x * (1.0 + aclgen.erf(x * 0.7071067811865476)) if hasattr(aclgen, "erf") else x

    @declare("SuiteSwish", inputs=("self",), scalars=(Scalar("betaOptional", optional=True, default=1.0),),
             outputs=("out",))
    def suite_swish(x, beta):
        return x * aclgen.sigmoid(beta * x)

    @declare("SuiteAffine", inputs=("self", Tensor("biasOptional", optional=True, default=0.0)),
             attrs=(Attr("scale", "double", default=2.0), Attr("negate", "bool", default=False)), outputs=("out",))
    def suite_affine(x, bias, scale, negate):
        y = x * scale + bias
        return -y if negate else y

    @declare("SuitePrelu", inputs=("self", Tensor("weight", along=1)), outputs=("out",))
    def suite_prelu(x, w):
        return aclgen.select(x > 0.0, x, x * w)

    @declare("SuiteMaskedRelu", inputs=("self",), outputs=("out", Tensor("mask", dtype="uint8")))
    def suite_masked_relu(x):
        pos = x > 0.0
        return aclgen.select(pos, x, 0.0), aclgen.select(pos, 1, 0)

    @declare("SuiteRmsNorm", inputs=("x", "gamma"), scalars=(Scalar("epsilon", default=1e-6),),
             attrs=(Attr("axes", "int64[]", default=(-1,)),), outputs=("yOut", "rstdOut"))
    def suite_rms_norm(x, gamma, eps, axes):
        rstd = aclgen.rsqrt(aclgen.mean(x * x, axes) + eps) if hasattr(aclgen, "rsqrt") \
            else 1.0 / aclgen.sqrt(aclgen.mean(x * x, axes) + eps)
        return x * rstd * gamma, rstd

    yield {name: aclgen.declaration.lookup(name) for name in made}
    for name in made:
        unregister(name)


def softmax(x, dim):
    e = np.exp(x - x.max(dim, keepdims=True))
    return e / e.sum(dim, keepdims=True)


def test_softmax_backward_with_an_attribute_in_every_face(ops):
    op = ops["SuiteSoftmaxBackward"]
    rng = np.random.default_rng(1)
    for dim in (-1, 0, 1):
        g = rng.standard_normal((5, 37)).astype(F32)
        y = softmax(rng.standard_normal((5, 37)).astype(np.float64), dim).astype(F32)
        want = y.astype(np.float64) * (g - (g.astype(np.float64) * y).sum(dim, keepdims=True))
        fn = aclgen.runtime.function.function_of(op)
        np.testing.assert_allclose(fn(g, y, dim), want, rtol=1e-5, atol=1e-6)
        out = np.zeros_like(g)  # aclnn takes CANN's order: gradOutput, output, dim, gradInput
        ws, ex, ret = aclnn.aclnnSuiteSoftmaxBackwardGetWorkspaceSize(acl.from_numpy(g), acl.from_numpy(y), dim,
                                                                        acl.from_numpy(out))
        assert ret == 0, acl.get_recent_err_msg()
        assert aclnn.aclnnSuiteSoftmaxBackward(None, ws, ex, None) == 0
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)
    phase1, _ = abi.operator_functions(op)
    assert phase1.declaration() == ("aclnnStatus aclnnSuiteSoftmaxBackwardGetWorkspaceSize(const aclTensor* gradOutput, "
                                    "const aclTensor* output, int64_t dim, aclTensor* gradInput, "
                                    "uint64_t* workspaceSize, aclOpExecutor** executor);")
    assert abi.header_name(op) == "aclnn_suite_softmax_backward.h"
    assert "int64_t dim" in headers.operator_header(op)


def test_attribute_errors_name_the_attribute(ops):
    t = acl.from_numpy(np.ones((2, 3), F32))
    f = aclnn.aclnnSuiteSoftmaxBackwardGetWorkspaceSize
    for value, status, words in ((None, NULL, "dim is nullptr"), ("1", INVALID, "dim must be an int64 (int64_t), got '1'"),
                                 (1.5, INVALID, "got 1.5"), (True, INVALID, "got True"),
                                 (5, INVALID, "axis 5 is outside [-2, 1] for 2 dims (attributes: dim=5)")):
        ret = f(t, t, value, acl.from_numpy(np.ones((2, 3), F32)))[2]
        assert ret == status and words in acl.get_recent_err_msg(), (value, acl.get_recent_err_msg())
    g = aclnn.aclnnSuiteGeluV2GetWorkspaceSize
    assert g(t, "erf", acl.from_numpy(np.ones((2, 3), F32)))[2] == INVALID
    assert "approximate 'erf' is not one of ['none', 'tanh']" in acl.get_recent_err_msg()


def test_each_attribute_value_is_its_own_variant(ops):
    fn = aclgen.runtime.function.function_of(ops["SuiteGeluV2"])
    x = np.linspace(-3, 3, 11, dtype=F32)
    tanh = fn(x, "tanh")
    k = 0.7978845608028654 * (x.astype(np.float64) + 0.044715 * x.astype(np.float64) ** 3)
    np.testing.assert_allclose(tanh, x / (1 + np.exp(-2 * k)), rtol=1e-5, atol=1e-6)
    assert not np.array_equal(fn(x), tanh)
    assert fn.kernel_for(x, "tanh").variant.attrs == ("tanh",) and fn.kernel_for(x).variant.attrs == ("none",)


def test_optional_scalar_null_is_its_default(ops):
    x = np.linspace(-4, 4, 33, dtype=F32)
    out = np.zeros_like(x)
    f = aclnn.aclnnSuiteSwishGetWorkspaceSize
    ws, ex, ret = f(acl.from_numpy(x), None, acl.from_numpy(out))
    assert ret == 0 and aclnn.aclnnSuiteSwish(None, ws, ex, None) == 0
    fn = aclgen.runtime.function.function_of(ops["SuiteSwish"])
    np.testing.assert_array_equal(out, fn(x, 1.0))
    np.testing.assert_array_equal(fn(x), fn(x, None))
    assert not np.array_equal(fn(x, 2.0), out)


def test_optional_tensor_left_out_is_its_default_and_attributes_of_every_kind(ops):
    fn = aclgen.runtime.function.function_of(ops["SuiteAffine"])
    x = np.arange(6, dtype=F32).reshape(2, 3)
    b = np.array([1, 2, 3], F32)
    np.testing.assert_array_equal(fn(x, b), x * 2 + b)
    np.testing.assert_array_equal(fn(x, None), x * 2)
    np.testing.assert_array_equal(fn(x, None, 0.5, True), -(x * 0.5))
    out = np.zeros_like(x)
    ws, ex, ret = aclnn.aclnnSuiteAffineGetWorkspaceSize(acl.from_numpy(x), None, 3.0, False, acl.from_numpy(out))
    assert ret == 0 and aclnn.aclnnSuiteAffine(None, ws, ex, None) == 0
    np.testing.assert_array_equal(out, x * 3)
    assert aclnn.aclnnSuiteAffineGetWorkspaceSize(acl.from_numpy(x), None, 3.0, 1, acl.from_numpy(out))[2] == INVALID
    assert "negate must be a bool (bool), got 1" in acl.get_recent_err_msg()
    phase1, _ = abi.operator_functions(ops["SuiteAffine"])
    assert "double scale, bool negate" in phase1.declaration()


def test_channel_broadcast_along_dim_1(ops):
    fn = aclgen.runtime.function.function_of(ops["SuitePrelu"])
    x = np.random.default_rng(2).standard_normal((2, 3, 4, 5)).astype(F32)
    w = np.array([0.1, 0.2, 0.3], F32)
    np.testing.assert_array_equal(fn(x, w), np.where(x > 0, x, x * w[None, :, None, None]))
    np.testing.assert_array_equal(fn(x, np.array([0.25], F32)), np.where(x > 0, x, x * F32(0.25)))
    with pytest.raises(aclgen.OperatorError, match="are not broadcastable"):
        fn(x, np.ones(4, F32))


def test_outputs_of_their_own_dtype(ops):
    fn = aclgen.runtime.function.function_of(ops["SuiteMaskedRelu"])
    x = np.array([-1, 0, 2, np.nan], F32).astype(ml_dtypes.bfloat16)
    y, mask = fn(x)
    assert y.dtype == x.dtype and mask.dtype == np.uint8
    assert mask.tolist() == [0, 0, 1, 0]


def test_reduced_outputs_and_array_attributes(ops):
    op = ops["SuiteRmsNorm"]
    fn = aclgen.runtime.function.function_of(op)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 4, 6)).astype(F32)
    gamma = rng.standard_normal(6).astype(F32)
    y, rstd = fn(x, gamma)
    x64 = x.astype(np.float64)
    r = 1 / np.sqrt((x64 * x64).mean(-1, keepdims=True) + 1e-6)
    assert rstd.shape == (3, 4, 1)
    np.testing.assert_allclose(rstd, r, rtol=2e-6)
    np.testing.assert_allclose(y, x64 * r * gamma, rtol=2e-6, atol=1e-6)
    # two axes, given as an aclIntArray through aclnn
    g2 = rng.standard_normal((4, 6)).astype(F32)
    axes = acl.create_int_array([-2, -1])
    y2, r2 = np.zeros_like(x), np.zeros((3, 1, 1), F32)
    eps = acl.create_scalar(1e-6, acl.ACL_FLOAT)
    ws, ex, ret = aclnn.aclnnSuiteRmsNormGetWorkspaceSize(acl.from_numpy(x), acl.from_numpy(g2), eps, axes,
                                                          acl.from_numpy(y2), acl.from_numpy(r2))
    assert ret == 0, acl.get_recent_err_msg()
    assert aclnn.aclnnSuiteRmsNorm(None, ws, ex, None) == 0
    want = 1 / np.sqrt((x64 * x64).mean((-2, -1), keepdims=True) + np.float64(F32(1e-6)))
    np.testing.assert_allclose(r2, want, rtol=2e-6)
    assert acl.destroy_int_array(axes) == 0
    ret = aclnn.aclnnSuiteRmsNormGetWorkspaceSize(acl.from_numpy(x), acl.from_numpy(g2), eps, axes,
                                                  acl.from_numpy(y2), acl.from_numpy(r2))[2]
    assert ret == INVALID and "axes was destroyed" in acl.get_recent_err_msg()
    # the reduced output's shape is checked
    bad = np.zeros((3, 4, 6), F32)
    with pytest.raises(aclgen.OperatorError, match=r"rstdOut shape \[3, 4, 6\] must equal the reduced shape \[3, 4, 1\]"):
        fn(x, gamma, out=(np.zeros_like(x), bad))


def test_a_module_declares_softmax_backward_and_the_cli_lists_it(tmp_path):

    module = tmp_path / "my_softmax.py"
    module.write_text(textwrap.dedent('''
        import aclgen

        @aclgen.operator("MySoftmaxBackward", inputs=("gradOutput", "output"), attrs=(aclgen.Attr("dim", "int64"),),
                         outputs=("gradInput",), broadcast=False)
        def my_softmax_backward(g, y, dim):
            return y * (g - aclgen.sum(g * y, axis=dim))
    '''))
    r = runners.aclgen("ops", str(module), timeout=120)
    assert r.returncode == 0, r.stderr
    assert "aclnnMySoftmaxBackward(gradOutput, output, dim, gradInput)" in r.stdout


def test_in_place_variant_in_aclnn_and_c():
    @aclgen.operator("SuiteLeakyRelu", inputs=("self",), scalars=("negativeSlope",), outputs=("out",), inplace="self")
    def suite_leaky_relu(x, slope):
        return aclgen.select(x > 0.0, x, x * slope)

    try:
        op = aclgen.declaration.lookup("SuiteLeakyRelu")
        x = np.linspace(-2, 2, 9, dtype=F32)
        want = np.where(x > 0, x, x * F32(0.1))
        ref = x.copy()
        slope = acl.create_scalar(0.1, acl.ACL_FLOAT)
        ws, ex, ret = aclnn.aclnnInplaceSuiteLeakyReluGetWorkspaceSize(acl.from_numpy(ref), slope)
        assert ret == 0, acl.get_recent_err_msg()
        assert aclnn.aclnnInplaceSuiteLeakyRelu(None, ws, ex, None) == 0
        np.testing.assert_array_equal(ref, want)
        ret = aclnn.aclnnInplaceSuiteLeakyReluGetWorkspaceSize(None, slope)[2]
        assert ret == NULL and acl.get_recent_err_msg() == "aclnnInplaceSuiteLeakyRelu: selfRef is nullptr"
        ret = aclnn.aclnnInplaceSuiteLeakyReluGetWorkspaceSize(acl.from_numpy(x.astype(np.int8)), slope)[2]
        assert ret == INVALID and acl.get_recent_err_msg().startswith("aclnnInplaceSuiteLeakyRelu: selfRef dtype ACL_INT8")
        decls = [f.declaration() for f in abi.operator_functions(op)]
        assert ("aclnnStatus aclnnInplaceSuiteLeakyReluGetWorkspaceSize(aclTensor* selfRef, const aclScalar* "
                "negativeSlope, uint64_t* workspaceSize, aclOpExecutor** executor);") in decls
        assert "aclnnInplaceSuiteLeakyRelu(" in headers.operator_header(op)
        assert "aclnnInplaceSuiteLeakyReluGetWorkspaceSize" in dir(aclnn)
    finally:
        unregister("SuiteLeakyRelu")


def test_half_forms_terms_gives_half_kernels_every_functions_half_form():
    """half_forms="terms" (SiluBackward's): a kernel whose outputs are all half types computes
    every function in its half-type form, unless the options name a choice; float32 kernels keep
    the analysis's default, and the expansion is shorter (the half exp, not the float32 one)."""
    from aclgen import dtypes as dt
    from aclgen.kernel import Options

    op = aclgen.ops.OPERATORS["silu_backward"]
    half, f32 = op.variant((dt.bfloat16,)), op.variant((dt.float32,))
    assert [op.kernel_options(v).half for v in (half, op.variant((dt.float16,)), f32)] == ["all", "all", "stored"]
    assert op.kernel_options(half, Options.from_knobs(half="off")).half == "off"
    short = op.kernel(half).ir["expand-math"].count("\n")
    full = op.kernel(half, Options.from_knobs(half="off")).ir["expand-math"].count("\n")
    assert short < full


@pytest.mark.parametrize("forms,reference,message", [
    ("terms", lambda x: x, "needs a reference with a `scale`"),
    ("everywhere", None, "is not one of"),
])
def test_half_forms_needs_a_scaled_bound(forms, reference, message):
    with pytest.raises(aclgen.DeclarationError, match=message):
        aclgen.operator("SuiteHalfTerms", inputs=("self",), outputs=("out",), reference=reference,
                        half_forms=forms)(lambda x: aclgen.exp(x))
