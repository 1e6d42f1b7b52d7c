package bench_test

import (
	"runtime"
	"testing"
)

func TestSpeedProbeTimesItsOwnThread(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	buf := make([]byte, probeBuffer)
	before, ok := threadCPU()
	if !ok {
		t.Fatal("the thread's CPU time cannot be read")
	}
	_ = probeWork(buf)
	after, ok := threadCPU()
	if !ok || after <= before {
		t.Fatalf("the probe's work took no CPU time on its thread: %v then %v", before, after)
	}
	t.Logf("the probe's work took %v", after-before)
	p := startSpeedProbe()
	if d, n := p.close(); n != 0 || d != 0 {
		t.Errorf("a probe stopped at once reported %v over %d samples", d, n)
	}
}
