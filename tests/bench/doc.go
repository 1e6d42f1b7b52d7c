// Package bench measures fleet rollouts on the hub test world: a simulated fleet (scale-mode
// spokes) under the real governance-policy-propagator and placement controller, rolled out
// once by a minimal floor driver that writes each batch's enforcement the moment the
// previous batch is done, and once by the operator, so that the operator's figures read
// against what the propagator and the spokes allow. The measurements live in the package's
// tests: BENCH_FLEET selects a fleet (docs/benchmarks.md, "Fleet rollouts"); without it a
// small smoke fleet keeps the code exercised under `go test`.
package bench
