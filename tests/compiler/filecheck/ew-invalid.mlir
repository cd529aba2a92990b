// RUN: aclgen opt %s --split-input-file --verify-diagnostics -p legalize-dtypes | filecheck %s

// Invalid ew IR is rejected by the dialect's verifiers, with a message that names the op.

// CHECK: error: ew.kernel block arguments {{.*}} do not match its signature
builtin.module {
  "ew.kernel"() <{sym_name = "k", inputs = [!ew.view<1xf32, contiguous>, !ew.view<1xf32, contiguous>], outputs = [!ew.view<1xf32, contiguous>], params = [], arg_names = ["g", "x", "out"]}> ({
  ^bb0(%g: f32):
    ew.yield %g : f32
  }) : () -> ()
}

// -----

// CHECK: error: ew.select condition must be i1 or a mask, got f32
builtin.module {
  "ew.kernel"() <{sym_name = "k", inputs = [!ew.view<1xf32, contiguous>], outputs = [!ew.view<1xf32, contiguous>], params = [], arg_names = ["x", "out"]}> ({
  ^bb0(%x: f32):
    %0 = ew.select %x, %x, %x : f32, f32, f32 -> f32
    ew.yield %0 : f32
  }) : () -> ()
}

// -----

// CHECK: error: ew.cmp result must be i1 or a vector of i1
builtin.module {
  "ew.kernel"() <{sym_name = "k", inputs = [!ew.view<1xf32, contiguous>], outputs = [!ew.view<1xf32, contiguous>], params = [], arg_names = ["x", "out"]}> ({
  ^bb0(%x: f32):
    %0 = ew.cmp "olt" %x, %x : f32, f32 -> f32
    ew.yield %0 : f32
  }) : () -> ()
}

// -----

// An op outside the registered dialects is a parse error with its position.
// CHECK: ew-invalid.mlir:40:{{[0-9]+}}: error: Operation ew.frobnicate is not registered
builtin.module {
  %0 = "ew.frobnicate"() : () -> f32
}

// -----

// A sum across rows is kept in f32: its output must be one.
// CHECK: error: ew.kernel partial 1 must be one of its f32 outputs
builtin.module {
  "ew.kernel"() <{sym_name = "k", inputs = [!ew.view<2xf32, contiguous>], outputs = [!ew.view<2xf32, contiguous>, !ew.view<2xbf16, contiguous>], params = [], arg_names = ["x", "y", "s"], reduced = #builtin.int<1>, partials = [#builtin.int<1>], blocks = #builtin.int<64>}> ({
  ^bb0(%x: f32):
    ew.yield %x, %x : f32, f32
  }) : () -> ()
}

// -----

// A valid kernel in the same file still runs through the pass.
// CHECK: builtin.module
// CHECK: ew.convert %x : f32 to f16
builtin.module {
  "ew.kernel"() <{sym_name = "k", inputs = [!ew.view<1xf32, contiguous>], outputs = [!ew.view<1xf16, contiguous>], params = [], arg_names = ["x", "out"]}> ({
  ^bb0(%x: f32):
    ew.yield %x : f32
  }) : () -> ()
}
