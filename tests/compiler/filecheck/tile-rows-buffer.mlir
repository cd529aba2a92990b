// RUN: aclgen opt %s -p tile-rows | filecheck %s

// A reduction's operand that the outputs use again and that takes a heavy function (softmax's
// exp(x - max)) is kept in a row buffer when the row fits it: the sum pass stores it, the column
// loop loads it instead of computing exp again. A longer row takes the else branch and keeps it
// in its f32 output: the sum pass stores e there, the column loop loads it and stores e / sum
// over it, through the same pointer (so vectorize-elementwise never streams that store). The
// heavy pass prefetches the next row (its pointer one kept stride on), two cache lines a step of
// 32 floats.

// CHECK-LABEL: func.func @softmax
// CHECK:       %[[BUF:.*]] = tile.alloca 8192 x f32
// CHECK:       %[[OUT:.*]] = tile.offset %out0[%{{.*}}] : f32
// CHECK:       %[[FITS:.*]] = arith.cmpi sle, %{{.*}}, %{{.*}} : i64
// CHECK-NEXT:  scf.if %[[FITS]] {
// CHECK:         %[[NEXT:.*]] = tile.offset %[[ROW:.*]][%{{.*}}] : f32
// CHECK:           %[[E:.*]] = ew.exp %{{.*}} : vector<32xf32> -> vector<32xf32>
// CHECK-NEXT:      tile.store %[[E]], %[[BUF]][%{{.*}}] stride %{{.*}} "contiguous" : vector<32xf32> -> f32
// CHECK:           tile.prefetch %[[NEXT]][%{{.*}}] : f32
// CHECK:           tile.prefetch %[[NEXT]][%{{.*}}] : f32
// CHECK:           %[[KEPT:.*]] = tile.load %[[BUF]][%{{.*}}] stride %{{.*}} "contiguous" : f32 -> f32
// CHECK-NEXT:      %[[Y:.*]] = ew.div %[[KEPT]], %{{.*}} : f32, f32 -> f32
// CHECK-NEXT:      tile.store %[[Y]], %[[OUT]][%{{.*}}]
// CHECK:       } else {
// CHECK:           %[[E2:.*]] = ew.exp %{{.*}} : vector<32xf32> -> vector<32xf32>
// CHECK-NEXT:      tile.store %[[E2]], %[[OUT]][%{{.*}}] stride %{{.*}} "contiguous" : vector<32xf32> -> f32
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
}
