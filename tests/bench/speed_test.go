package bench_test

import (
	"encoding/binary"
	"runtime"
	"slices"
	"syscall"
	"time"
	"unsafe"
)

// The machine's speed while a phase runs. Every process of a phase keeps both cores busy, so
// a phase's time is the CPU work it needs over the CPU the machine gives. When the host gives
// less (a busy neighbour on the same cores, a lower clock), every process of the phase uses
// more CPU time for the same requests. The probe tells that apart from more work: once a
// second it runs a fixed piece of work, reading a buffer larger than the caches, and measures
// the CPU time its own thread took for it. That time leaves out the waits for a core; it
// grows when the host runs the same work slower, and a little with the memory traffic of the
// phase's processes, which is alike in phases that all keep the cores busy.
const (
	probeEvery  = time.Second
	probeBuffer = 16 << 20
)

// clockThreadCPU is Linux's CLOCK_THREAD_CPUTIME_ID: the calling thread's CPU time, to the
// nanosecond (getrusage's is counted in scheduler ticks).
const clockThreadCPU = 3

// probePasses is how many times the work reads the buffer: about 3 ms on an idle core.
const probePasses = 4

// speedProbe samples the CPU time of the probe's work until stopped.
type speedProbe struct {
	stop    chan struct{}
	done    chan struct{}
	samples []time.Duration
}

// startSpeedProbe starts sampling.
func startSpeedProbe() *speedProbe {
	p := &speedProbe{stop: make(chan struct{}), done: make(chan struct{})}
	go p.run()
	return p
}

func (p *speedProbe) run() {
	defer close(p.done)
	// The thread runs only the probe: the CPU time it reads is the probe's.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	buf := make([]byte, probeBuffer)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	tick := time.NewTicker(probeEvery)
	defer tick.Stop()
	var sink uint64
	for {
		select {
		case <-p.stop:
			_ = sink
			return
		case <-tick.C:
		}
		before, ok := threadCPU()
		sink += probeWork(buf)
		after, ok2 := threadCPU()
		if ok && ok2 {
			p.samples = append(p.samples, after-before)
		}
	}
}

// probeWork is the fixed piece of work: a checksum of every word of buf, probePasses times.
func probeWork(buf []byte) uint64 {
	var sum uint64
	for range probePasses {
		for i := 0; i+8 <= len(buf); i += 8 {
			sum = sum*31 + binary.LittleEndian.Uint64(buf[i:])
		}
	}
	return sum
}

// threadCPU is the calling thread's CPU time.
func threadCPU() (time.Duration, bool) {
	var ts syscall.Timespec
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPU, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}

// close stops the probe and returns the median CPU time of its work and the samples' count.
func (p *speedProbe) close() (time.Duration, int) {
	close(p.stop)
	<-p.done
	if len(p.samples) == 0 {
		return 0, 0
	}
	s := slices.Clone(p.samples)
	slices.Sort(s)
	return s[len(s)/2], len(s)
}
