// RUN: aclgen opt %s -p 'vectorize-elementwise{width=16 align=false}' | filecheck %s
// RUN: aclgen opt %s -p 'vectorize-elementwise{width=16 align=false},convert-scf-to-cf,lower-to-llvm' | filecheck %s --check-prefix=LLVM
// RUN: aclgen opt %s -p 'vectorize-elementwise{width=16 align=false deinterleave=false}' | filecheck %s --check-prefix=OFF
// RUN: aclgen opt %s -p 'vectorize-elementwise{width=16 align=false},convert-scf-to-cf,lower-to-llvm{halves_masked=false}' | filecheck %s --check-prefix=WORDS

// A column loop whose every access is contiguous bf16 is vectorized with deinterleaved loads and
// stores (even columns in lanes 0-7, odd ones in lanes 8-15). The masked tail's columns go into
// and out of their scratch vectors in memory order, and the body reads and writes those
// deinterleaved like any row.
// CHECK:       scf.for %piece
// CHECK:         %[[M:.*]] = tile.prefix
// CHECK-NEXT:    %[[T:.*]] = tile.load %{{.*}}[%{{.*}}] stride %s mask %[[M]] : vector<16xi1> "contiguous" {fill = 0.000000e+00 : f32} : bf16 -> vector<16xbf16>
// CHECK-NEXT:    tile.store %[[T]], %scratch[%{{.*}}] stride %{{.*}} "contiguous" : vector<16xbf16> -> bf16
// CHECK:         scf.for
// CHECK-NEXT:      tile.load %{{.*}}[%{{.*}}] stride %s "contiguous" {deinterleaved} : bf16 -> vector<16xbf16>
// CHECK:           tile.store %{{.*}}, %{{.*}}[%{{.*}}] stride %s "contiguous" {deinterleaved} : vector<16xbf16> -> bf16
// CHECK:         } {tile.vector}
// CHECK:         %[[M:.*]] = tile.prefix
// CHECK-NEXT:    %[[T:.*]] = tile.load %scratch_1[%{{.*}}] stride %{{.*}} "contiguous" : bf16 -> vector<16xbf16>
// CHECK-NEXT:    tile.store %[[T]], %{{.*}}[%{{.*}}] stride %s mask %[[M]] : vector<16xi1> "contiguous" : vector<16xbf16> -> bf16
// CHECK:       } {tile.pieces}
// OFF-NOT:     deinterleaved

// The masked tail reads its columns into the scratch vector as i16 lanes:
// LLVM:        llvm.call_intrinsic "llvm.masked.load.v16i16.p0"
// Lowered, bf16 lives in the upper half of i32 lanes: one load of 8 words gives the even
// columns by a shift and the odd ones by a mask, widening to f32 is a bitcast; narrowing rounds
// to nearest-even on the bits (no NaN fix-up: a NaN here can only come from a bf16 input, whose
// payload lies in the upper half) and the store packs the halves back with a shift and an or.
// LLVM:        %[[W:.*]] = llvm.load %{{.*}} {alignment = 2 : i64} : !llvm.ptr -> vector<8xi32>
// LLVM:        %[[EVEN:.*]] = llvm.shl %[[W]], %{{.*}} : vector<8xi32>
// LLVM:        %[[ODD:.*]] = llvm.and %[[W]], %{{.*}} : vector<8xi32>
// LLVM-NEXT:   %[[V:.*]] = llvm.shufflevector %[[EVEN]], %[[ODD]] [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] : vector<8xi32>
// LLVM-NEXT:   llvm.bitcast %[[V]] : vector<16xi32> to vector<16xf32>
// LLVM:        llvm.fmul %{{.*}} : vector<16xf32>
// LLVM-NOT:    llvmx.fcmp
// LLVM:        llvm.mlir.constant(dense<32767> : vector<16xi32>)
// LLVM:        %[[LO:.*]] = llvm.shufflevector %[[R:.*]], %[[R]] [0, 1, 2, 3, 4, 5, 6, 7] : vector<16xi32>
// LLVM-NEXT:   %[[HI:.*]] = llvm.shufflevector %[[R]], %[[R]] [8, 9, 10, 11, 12, 13, 14, 15] : vector<16xi32>
// LLVM:        llvm.lshr %[[LO]], %{{.*}} : vector<8xi32>
// LLVM:        llvm.and %[[HI]], %{{.*}} : vector<8xi32>
// LLVM:        %[[PACKED:.*]] = llvm.or
// LLVM:        llvm.store %[[PACKED]], %{{.*}} {alignment = 2 : i64} : vector<8xi32>, !llvm.ptr
// The masked tail writes its columns back as i16 lanes:
// LLVM:        llvm.call_intrinsic "llvm.masked.store.v16i16.p0"
// A target without 16-bit masked loads and stores (x86 before AVX-512BW, where LLVM's would be a
// branch per lane) reads the 32-bit words the columns fill under a word mask and an odd last
// column by itself, and writes them the same way:
// WORDS:       %[[WORDS:.*]] = llvm.call_intrinsic "llvm.masked.load.v8i32.p0"
// WORDS-NEXT:  %[[LAST:.*]] = llvm.getelementptr
// WORDS-NEXT:  %[[ODD:.*]] = llvm.load %[[LAST]] {alignment = 2 : i64} : !llvm.ptr -> i16
// WORDS-NEXT:  %[[RAW:.*]] = llvm.bitcast %[[WORDS]] : vector<8xi32> to vector<16xi16>
// WORDS-NEXT:  llvm.insertelement %[[ODD]], %[[RAW]][%{{.*}} : i64] : vector<16xi16>
// WORDS:       llvm.call_intrinsic "llvm.masked.store.v8i32.p0"
// WORDS:       llvm.store %{{.*}}, %{{.*}} {alignment = 2 : i64} : i16, !llvm.ptr
// WORDS-NOT:   v16i16.p0
builtin.module {
  func.func @half(%in0: !llvm.ptr, %out0: !llvm.ptr, %meta: !llvm.ptr, %begin: i64, %end: i64) {
    %s = tile.param %meta[1] : i64
    %one = arith.constant 1 : i64
    scf.for %c = %begin to %end step %one : i64 {
      %x = tile.load %in0[%c] stride %s "contiguous" : bf16 -> bf16
      %w = ew.convert %x : bf16 to f32
      %h = ew.constant 0.5 : f32
      %y = ew.mul %w, %h : f32, f32 -> f32
      %b = ew.convert %y : f32 to bf16
      tile.store %b, %out0[%c] stride %s "contiguous" : bf16 -> bf16
    } {tile.inner}
    func.return
  }
}
