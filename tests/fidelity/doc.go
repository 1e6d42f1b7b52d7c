// Package fidelity holds the suite that checks the spoke simulator (tests/sim, scale mode)
// against real spokes (tests/world/realspoke): the same scenario runs on two hubs of the test
// world, one whose clusters are simulated and one whose clusters are real spokes, and the
// replicated and root policy statuses the real propagator ends up with must be the same,
// timestamps and event names aside.
package fidelity
