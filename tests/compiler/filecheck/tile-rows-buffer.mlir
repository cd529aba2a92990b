// RUN: aclgen opt %s -p tile-rows | filecheck %s

// A reduction's operand that the outputs use again and that takes a heavy function (softmax's
// exp(x - max)) is kept for the column loop instead of computed again: in a row buffer when the
// row fits it, else in the f32 output itself. The passes are built once and store e through a
// select of the two; the column loop is built for each (an scf.if): from the buffer, or from the
// output, loading e and storing e / sum over it through the same pointer (so vectorize-elementwise
// never streams that store). The heavy pass takes two vectors a step (both computed before
// either is stored), then masked steps (a whole vector and a part at most); it prefetches the next row (its pointer one kept stride on), two
// cache lines a step of 32 floats.

// CHECK-LABEL: func.func @softmax
// CHECK:       %[[BUF:.*]] = tile.alloca 8192 x f32
// CHECK:       %[[OUT:.*]] = tile.offset %out0[%{{.*}}] : f32
// CHECK:       %[[FITS:.*]] = arith.cmpi sle, %{{.*}}, %{{.*}} : i64
// CHECK-NEXT:  %[[KEEP:.*]] = arith.select %[[FITS]], %[[BUF]], %[[OUT]] : !llvm.ptr
// CHECK:         %[[NEXT:.*]] = tile.offset %[[ROW:.*]][%{{.*}}] : f32
// CHECK:           %[[E:.*]] = ew.exp %{{.*}} : vector<32xf32> -> vector<32xf32>
// CHECK:           %[[E2:.*]] = ew.exp %{{.*}} : vector<32xf32> -> vector<32xf32>
// CHECK-NEXT:      tile.store %[[E]], %[[KEEP]][%{{.*}}] stride %{{.*}} "contiguous" : vector<32xf32> -> f32
// CHECK:           tile.prefetch %[[NEXT]][%{{.*}}] : f32
// CHECK:           tile.prefetch %[[NEXT]][%{{.*}}] : f32
// CHECK:           tile.store %[[E2]], %[[KEEP]][%{{.*}}] stride %{{.*}} "contiguous" : vector<32xf32> -> f32
// CHECK:           %[[MASK:.*]] = tile.prefix %{{.*}} : i64 -> vector<32xi1>
// CHECK:           %[[E3:.*]] = ew.exp %{{.*}} : vector<32xf32> -> vector<32xf32>
// CHECK:           tile.store %[[E3]], %[[KEEP]][%{{.*}}] stride %{{.*}} mask %[[MASK]]
// CHECK:       scf.if %[[FITS]] {
// CHECK:           %[[KEPT:.*]] = tile.load %[[BUF]][%{{.*}}] stride %{{.*}} "contiguous" : f32 -> f32
// CHECK-NEXT:      %[[Y:.*]] = ew.div %[[KEPT]], %{{.*}} : f32, f32 -> f32
// CHECK-NEXT:      tile.store %[[Y]], %[[OUT]][%{{.*}}]
// CHECK:       } else {
// CHECK:           %[[HELD:.*]] = tile.load %[[OUT]][%{{.*}}] stride %{{.*}} "contiguous" : f32 -> f32
// CHECK-NEXT:      %[[Y2:.*]] = ew.div %[[HELD]], %{{.*}} : f32, f32 -> f32
// CHECK-NEXT:      tile.store %[[Y2]], %[[OUT]][%{{.*}}]
// CHECK-NOT:       ew.exp

// An output that reads its input again in the column loop (e / sum * x) cannot hold e there: an
// output written in place over x would have clobbered it. Its long rows compute exp twice.

// CHECK-LABEL: func.func @scaled_softmax
// CHECK:       } else {
// CHECK-NOT:       tile.store %{{.*}}, %{{.*}}[%{{.*}}] stride %{{.*}} "contiguous" : vector<32xf32> -> f32
// CHECK:           ew.exp %{{.*}} : f32 -> f32
// A half-type output cannot hold e: a longer row's passes store it to a 128-float scratch at the
// column modulo 64 (the same code as a row that fits, whose index mask is -1), and the final
// pass computes exp again.

// CHECK-LABEL: func.func @softmax_bf16
// CHECK:       %[[BUF3:.*]] = tile.alloca 8192 x f32
// CHECK-NEXT:  %[[SCRATCH:.*]] = tile.alloca 128 x f32
// CHECK:       %[[FITS3:.*]] = arith.cmpi sle, %{{.*}}, %{{.*}} : i64
// CHECK:       %[[WRAP:.*]] = arith.select %[[FITS3]], %{{.*}}, %{{.*}} : i64
// CHECK-NEXT:  %[[KEEP3:.*]] = arith.select %[[FITS3]], %[[BUF3]], %[[SCRATCH]] : !llvm.ptr
// CHECK:           %[[E4:.*]] = ew.exp %{{.*}} : vector<32xf32> -> vector<32xf32>
// CHECK:           %[[AT:.*]] = arith.andi %{{.*}}, %[[WRAP]] : i64
// CHECK-NEXT:      tile.store %[[E4]], %[[KEEP3]][%[[AT]]]
// CHECK:       scf.if %[[FITS3]] {
// CHECK:           tile.load %[[BUF3]][%{{.*}}] stride %{{.*}} "contiguous" : f32 -> f32
// CHECK-NOT:       ew.exp
// CHECK:       } else {
// CHECK:           ew.exp %{{.*}} : f32 -> f32

builtin.module {
  "ew.kernel"() <{sym_name = "softmax", inputs = [!ew.view<2xf32, contiguous>], outputs = [!ew.view<2xf32, contiguous>], params = [], arg_names = ["self", "out"], reduced = #builtin.int<1>}> ({
  ^bb0(%x: f32):
    %0 = ew.reduce "amax" %x : f32 -> f32
    %1 = ew.sub %x, %0 : f32, f32 -> f32
    %2 = ew.exp %1 : f32 -> f32
    %3 = ew.reduce "sum" %2 : f32 -> f32
    %4 = ew.div %2, %3 : f32, f32 -> f32
    ew.yield %4 : f32
  }) : () -> ()
  "ew.kernel"() <{sym_name = "scaled_softmax", inputs = [!ew.view<2xf32, contiguous>], outputs = [!ew.view<2xf32, contiguous>], params = [], arg_names = ["self", "out"], reduced = #builtin.int<1>}> ({
  ^bb0(%x: f32):
    %0 = ew.reduce "amax" %x : f32 -> f32
    %1 = ew.sub %x, %0 : f32, f32 -> f32
    %2 = ew.exp %1 : f32 -> f32
    %3 = ew.reduce "sum" %2 : f32 -> f32
    %4 = ew.div %2, %3 : f32, f32 -> f32
    %5 = ew.mul %4, %x : f32, f32 -> f32
    ew.yield %5 : f32
  }) : () -> ()
  "ew.kernel"() <{sym_name = "softmax_bf16", inputs = [!ew.view<2xbf16, contiguous>], outputs = [!ew.view<2xbf16, contiguous>], params = [], arg_names = ["self", "out"], reduced = #builtin.int<1>}> ({
  ^bb0(%x: bf16):
    %0 = ew.convert %x : bf16 to f32
    %1 = ew.reduce "amax" %0 : f32 -> f32
    %2 = ew.sub %0, %1 : f32, f32 -> f32
    %3 = ew.exp %2 : f32 -> f32
    %4 = ew.reduce "sum" %3 : f32 -> f32
    %5 = ew.div %3, %4 : f32, f32 -> f32
    %6 = ew.convert %5 : f32 to bf16
    ew.yield %6 : bf16
  }) : () -> ()
}
