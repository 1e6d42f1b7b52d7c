package realspoke_test

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	. "github.com/onsi/gomega"

	"github.com/cgu-operator/cgu-operator/tests/testenv"
)

// controlPlaneProcs returns the kube-apiserver and etcd processes below this process.
func controlPlaneProcs() []testenv.Process {
	procs, err := testenv.ControlPlaneProcesses()
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return procs
}

// newProcs returns the processes of after that are not in before.
func newProcs(before, after []testenv.Process) []testenv.Process {
	seen := map[int]bool{}
	for _, p := range before {
		seen[p.PID] = true
	}
	var fresh []testenv.Process
	for _, p := range after {
		if !seen[p.PID] {
			fresh = append(fresh, p)
		}
	}
	return fresh
}

// rssKiB returns the resident set size of a process in KiB.
func rssKiB(pid int) int {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	Expect(err).NotTo(HaveOccurred())
	defer f.Close()
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		if rest, ok := strings.CutPrefix(scanner.Text(), "VmRSS:"); ok {
			kib, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			Expect(err).NotTo(HaveOccurred())
			return kib
		}
	}
	Expect(scanner.Err()).NotTo(HaveOccurred())
	return 0
}

// running reports whether a process is still there.
func running(pid int) bool {
	_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
	return err == nil
}
