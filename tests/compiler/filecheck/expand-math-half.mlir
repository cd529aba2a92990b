// RUN: aclgen opt %s -p 'expand-math{avx512=true}' | filecheck %s
// RUN: aclgen opt %s -p 'expand-math{avx512=true half="off"}' | filecheck %s --check-prefix=FULL

// Precision follows the stored type. exp(x) * sigmoid(y) reaches the bf16 output through a
// multiply only: both are built for a half-type result (exp: one ln 2 constant, 0x3f317218, and
// no 1 + r split; sigmoid: that exp and one division, without the 2^25 scaling). log(x) + x is an
// add: log keeps its f32 expansion (the Fast2Sum of k C1 + f, C1 = 0x1.62e4p-1). exp(x) - 1 is
// stored as bf16 too, but through a subtraction, which can cancel: f32 as well, as is exp(x)
// stored as f32. 1 / (1 + exp(y)) is a sum of nonnegative values, which cannot cancel: half
// form. So is softplus's max(y, 0) + log1p(exp(-|y|)): log1p of a nonnegative value does not
// magnify a relative error, and its result is nonnegative (both half forms: log1p's Q_HALF,
// 0x1.5534a2p-2 first, not Q's 0x1.555548p-2). With half="off" every function keeps its f32
// expansion.

// CHECK-LABEL: sym_name = "k"
// CHECK-NOT:   ew.exp
// CHECK:       ew.constant -0.693147182464599{{[0-9]*}} : f32
// CHECK-NOT:   ew.constant -0.693145751953125 : f32
// CHECK:       llvmx.avx512ps "scalef"
// sigmoid: exp_half's constant again, no 2^25 (33554432), then the division
// CHECK:       ew.abs
// CHECK:       ew.constant -0.693147182464599{{[0-9]*}} : f32
// CHECK-NOT:   33554432.0
// CHECK:       ew.div
// CHECK:       ew.mul
// CHECK:       ew.convert %{{.*}} : f32 to bf16
// log + x: the f32 log (its C1)
// CHECK:       llvmx.avx512ps "getexp"
// CHECK:       ew.constant 0.693145751953125 : f32
// CHECK:       ew.convert %{{.*}} : f32 to bf16
// exp - 1 and exp stored as f32: the f32 exp (C1, hi = 1 + r) twice
// CHECK:       ew.constant -0.693145751953125 : f32
// CHECK:       ew.constant -0.693145751953125 : f32
// CHECK-NOT:   ew.constant -0.693145751953125 : f32
// CHECK:       ew.constant -0.693147182464599{{[0-9]*}} : f32
// CHECK:       ew.div
// CHECK:       ew.constant -0.693147182464599{{[0-9]*}} : f32
// CHECK-NOT:   0.3333331346511841
// CHECK:       ew.constant 0.3332085907459259 : f32
// CHECK:       ew.yield

// FULL-NOT:    ew.constant -0.693147182464599{{[0-9]*}} : f32
// FULL:        33554432.0
// FULL-NOT:    ew.constant -0.693147182464599{{[0-9]*}} : f32
// FULL:        0.3333331346511841
// FULL:        ew.yield

builtin.module {
  "ew.kernel"() <{sym_name = "k", inputs = [!ew.view<1xbf16, contiguous>, !ew.view<1xbf16, contiguous>], outputs = [!ew.view<1xbf16, contiguous>, !ew.view<1xbf16, contiguous>, !ew.view<1xbf16, contiguous>, !ew.view<1xf32, contiguous>, !ew.view<1xbf16, contiguous>, !ew.view<1xbf16, contiguous>], params = [], arg_names = ["x", "y", "a", "b", "c", "d", "e", "f"], reduced = #builtin.int<0>}> ({
  ^bb0(%x16: bf16, %y16: bf16):
    %x = ew.convert %x16 : bf16 to f32
    %y = ew.convert %y16 : bf16 to f32
    %e = ew.exp %x : f32 -> f32
    %s = ew.sigmoid %y : f32 -> f32
    %m = ew.mul %e, %s : f32, f32 -> f32
    %a = ew.convert %m : f32 to bf16
    %l = ew.log %x : f32 -> f32
    %lx = ew.add %l, %x : f32, f32 -> f32
    %b = ew.convert %lx : f32 to bf16
    %e2 = ew.exp %x : f32 -> f32
    %one = ew.constant 1.0 : f32
    %em1 = ew.sub %e2, %one : f32, f32 -> f32
    %c = ew.convert %em1 : f32 to bf16
    %d = ew.exp %y : f32 -> f32
    %e3 = ew.exp %y : f32 -> f32
    %den = ew.add %one, %e3 : f32, f32 -> f32
    %q = ew.div %one, %den : f32, f32 -> f32
    %eq = ew.convert %q : f32 to bf16
    %zero = ew.constant 0.0 : f32
    %ay = ew.abs %y : f32 -> f32
    %nay = ew.neg %ay : f32 -> f32
    %e4 = ew.exp %nay : f32 -> f32
    %l4 = ew.log1p %e4 : f32 -> f32
    %my = ew.maximum %y, %zero : f32, f32 -> f32
    %sp = ew.add %my, %l4 : f32, f32 -> f32
    %spf = ew.convert %sp : f32 to bf16
    ew.yield %a, %b, %c, %d, %eq, %spf : bf16, bf16, bf16, f32, bf16, bf16
  }) : () -> ()
}
