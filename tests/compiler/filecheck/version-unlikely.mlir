// RUN: aclgen opt %s -p version-unlikely | filecheck %s
// RUN: aclgen opt %s -p version-unlikely | filecheck %s --check-prefix=NONE

// A vector step whose formula marked x < -80 unlikely, then x > -80: the first mask is tested once
// (tile.any), and the step from the promise on runs as written or in a copy made for the mask
// false in every lane. The copy takes each select's other side and drops what only the rare side
// computed (its scale and its product); the ops before the promise that only the versions use
// (the care's constant) move in with them. The second promise versions the common copy again
// (there x itself is stored); in the rare version it is the mask. No promise is left.

// CHECK:       scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} : i64 {
// CHECK:         %[[X:.*]] = tile.load
// CHECK-NEXT:    %[[LO:.*]] = ew.constant -80.0 : vector<8xf32>
// CHECK-NEXT:    %[[M:.*]] = ew.cmp "olt" %[[X]], %[[LO]]
// CHECK-NEXT:    %[[ANY:.*]] = tile.any %[[M]] : vector<8xi1> -> i1
// CHECK-NEXT:    scf.if %[[ANY]] {
// CHECK-NEXT:      %[[SCALE:.*]] = ew.constant {{.*}} : vector<8xf32>
// CHECK-NEXT:      %[[CARE:.*]] = ew.mul %[[X]], %[[SCALE]]
// CHECK-NEXT:      %[[COMMON:.*]] = ew.exp %[[X]]
// CHECK-NEXT:      %[[Y:.*]] = ew.select %[[M]], %[[CARE]], %[[COMMON]]
// CHECK-NEXT:      %[[Z:.*]] = ew.cmp "ogt" %[[X]], %[[LO]]
// CHECK-NEXT:      %[[R:.*]] = ew.select %[[Z]], %[[Y]], %[[X]]
// CHECK-NEXT:      tile.store %[[R]]
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %[[Z2:.*]] = ew.cmp "ogt" %[[X]], %[[LO]]
// CHECK-NEXT:      %[[ANY2:.*]] = tile.any %[[Z2]] : vector<8xi1> -> i1
// CHECK-NEXT:      scf.if %[[ANY2]] {
// CHECK-NEXT:        %[[COMMON2:.*]] = ew.exp %[[X]]
// CHECK-NEXT:        %[[R2:.*]] = ew.select %[[Z2]], %[[COMMON2]], %[[X]]
// CHECK-NEXT:        tile.store %[[R2]]
// CHECK-NEXT:      } else {
// CHECK-NEXT:        tile.store %[[X]]
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:  } {tile.vector}
// NONE-NOT:    ew.unlikely

builtin.module {
  func.func @rare(%in0: !llvm.ptr, %out0: !llvm.ptr, %n: i64) {
    %0 = arith.constant 0 : i64
    %1 = arith.constant 8 : i64
    %2 = arith.constant 1 : i64
    scf.for %c = %0 to %n step %1 : i64 {
      %x = tile.load %in0[%c] stride %2 "contiguous" : f32 -> vector<8xf32>
      %scale = ew.constant 1.0e+30 : vector<8xf32>
      %lo = ew.constant -80.0 : vector<8xf32>
      %m = ew.cmp "olt" %x, %lo : vector<8xf32>, vector<8xf32> -> vector<8xi1>
      %t = ew.unlikely %m : vector<8xi1> -> vector<8xi1>
      %care = ew.mul %x, %scale : vector<8xf32>, vector<8xf32> -> vector<8xf32>
      %common = ew.exp %x : vector<8xf32> -> vector<8xf32>
      %y = ew.select %t, %care, %common : vector<8xi1>, vector<8xf32>, vector<8xf32> -> vector<8xf32>
      %z = ew.cmp "ogt" %x, %lo : vector<8xf32>, vector<8xf32> -> vector<8xi1>
      %again = ew.unlikely %z : vector<8xi1> -> vector<8xi1>
      %r = ew.select %again, %y, %x : vector<8xi1>, vector<8xf32>, vector<8xf32> -> vector<8xf32>
      tile.store %r, %out0[%c] stride %2 "contiguous" : vector<8xf32> -> f32
      scf.yield
    } {tile.vector}
    func.return
  }
}
