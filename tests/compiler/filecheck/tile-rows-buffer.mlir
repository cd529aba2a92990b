// RUN: aclgen opt %s -p tile-rows | filecheck %s

// A reduction's operand that the outputs use again and that takes a heavy function (softmax's
// exp(x - max)) is kept in a row buffer when the row fits it: the sum pass stores it, the column
// loop loads it instead of computing exp again; longer rows take the else branch and compute it
// twice. The heavy pass prefetches the next row (its pointer one kept stride on), two cache
// lines a step of 32 floats.

// CHECK-LABEL: func.func @softmax
// CHECK:       %[[BUF:.*]] = tile.alloca 8192 x f32
// CHECK:       %[[FITS:.*]] = arith.cmpi sle, %{{.*}}, %{{.*}} : i64
// CHECK-NEXT:  scf.if %[[FITS]] {
// CHECK:         %[[ROWBUF:.*]] = tile.offset %[[BUF]][%{{.*}}] : f32
// CHECK:         %[[NEXT:.*]] = tile.offset %[[ROW:.*]][%{{.*}}] : f32
// CHECK:           %[[E:.*]] = ew.exp %{{.*}} : vector<32xf32> -> vector<32xf32>
// CHECK-NEXT:      tile.store %[[E]], %[[ROWBUF]][%{{.*}}] stride %{{.*}} "contiguous" : vector<32xf32> -> f32
// CHECK:           tile.prefetch %[[NEXT]][%{{.*}}] : f32
// CHECK:           tile.prefetch %[[NEXT]][%{{.*}}] : f32
// CHECK:           %[[KEPT:.*]] = tile.load %{{.*}}[%{{.*}}] stride %{{.*}} "contiguous" : f32 -> f32
// CHECK-NEXT:      %{{.*}} = ew.div %[[KEPT]], %{{.*}} : f32, f32 -> f32
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
}
