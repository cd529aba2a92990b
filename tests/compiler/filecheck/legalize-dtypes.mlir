// RUN: aclgen opt %s --split-input-file -p legalize-dtypes | filecheck %s

// fp16 HardswishBackward as traced: mixed f16/f32 arithmetic. Every f16 operand is widened to f32
// before the compares and the arithmetic, and the result is rounded to f16 once, right before the
// yield.

// CHECK-LABEL: sym_name = "hardswish_backward_f16_f16_f16_r1_ccc"
// CHECK:       %[[X:.*]] = ew.convert %self : f16 to f32
// CHECK:       ew.cmp "olt" %[[X]], %{{.*}} : f32, f32 -> i1
// CHECK:       ew.cmp "ole" %{{.*}}, %{{.*}} : f32, f32 -> i1
// CHECK:       ew.mul %{{.*}}, %{{.*}} : f32, f32 -> f32
// CHECK:       %[[G:.*]] = ew.convert %gradOutput : f16 to f32
// CHECK:       %[[M:.*]] = ew.mul %[[G]], %{{.*}} : f32, f32 -> f32
// CHECK-NEXT:  %[[H:.*]] = ew.convert %[[M]] : f32 to f16
// CHECK-NEXT:  ew.yield %[[H]] : f16
// CHECK-NOT:   f16, f32
builtin.module {
  "ew.kernel"() <{sym_name = "hardswish_backward_f16_f16_f16_r1_ccc", inputs = [!ew.view<1xf16, contiguous>, !ew.view<1xf16, contiguous>], outputs = [!ew.view<1xf16, contiguous>], params = [], arg_names = ["gradOutput", "self", "out"]}> ({
  ^bb0(%gradOutput: f16, %self: f16):
    %0 = ew.constant -3.0 : f16
    %1 = ew.cmp "olt" %self, %0 : f16, f16 -> i1
    %2 = ew.constant 3.0 : f16
    %3 = ew.cmp "ole" %self, %2 : f16, f16 -> i1
    %4 = ew.constant 0.3333333432674408 : f32
    %5 = ew.mul %self, %4 : f16, f32 -> f32
    %6 = ew.constant 0.5 : f32
    %7 = ew.add %5, %6 : f32, f32 -> f32
    %8 = ew.constant 1.0 : f32
    %9 = ew.select %3, %7, %8 : i1, f32, f32 -> f32
    %10 = ew.constant 0.0 : f32
    %11 = ew.select %1, %10, %9 : i1, f32, f32 -> f32
    %12 = ew.mul %gradOutput, %11 : f16, f32 -> f32
    ew.yield %12 : f32
  }) : () -> ()
}
// -----

// int8 SeluBackward: the integer compare stays exact in i8; arithmetic widens both integer
// operands to f32; the yield rounds the f32 result to nearest even, then converts it to i8
// (saturating).

// CHECK-LABEL: sym_name = "selu_backward_i8_i8_i8_r1_ccc"
// CHECK:       ew.cmp "ole" %result, %{{.*}} : i8, i8 -> i1
// CHECK:       ew.convert %result : i8 to f32
// CHECK:       ew.convert %gradOutput : i8 to f32
// CHECK:       %[[S:.*]] = ew.select %{{.*}}, %{{.*}}, %{{.*}} : i1, f32, f32 -> f32
// CHECK-NEXT:  %[[N:.*]] = ew.roundeven %[[S]] : f32 -> f32
// CHECK-NEXT:  %[[R:.*]] = ew.convert %[[N]] : f32 to i8
// CHECK-NEXT:  ew.yield %[[R]] : i8
builtin.module {
  "ew.kernel"() <{sym_name = "selu_backward_i8_i8_i8_r1_ccc", inputs = [!ew.view<1xi8, contiguous>, !ew.view<1xi8, contiguous>], outputs = [!ew.view<1xi8, contiguous>], params = [], arg_names = ["gradOutput", "result", "gradInput"]}> ({
  ^bb0(%gradOutput: i8, %result: i8):
    %0 = ew.constant 0 : i8
    %1 = ew.cmp "ole" %result, %0 : i8, i8 -> i1
    %2 = ew.constant 1.7580993175506592 : f32
    %3 = ew.add %result, %2 : i8, f32 -> f32
    %4 = ew.mul %gradOutput, %3 : i8, f32 -> f32
    %5 = ew.constant 1.0507010221481323 : f32
    %6 = ew.mul %gradOutput, %5 : i8, f32 -> f32
    %7 = ew.select %1, %4, %6 : i1, f32, f32 -> f32
    ew.yield %7 : f32
  }) : () -> ()
}