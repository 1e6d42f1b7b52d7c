package realspoke_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	. "github.com/onsi/gomega"
)

// proc is a process the test process started, directly or not.
type proc struct {
	pid  int
	comm string
}

// controlPlaneProcs returns the kube-apiserver and etcd processes below this process.
func controlPlaneProcs() []proc {
	var found []proc
	for _, p := range descendants(os.Getpid()) {
		if p.comm == "kube-apiserver" || p.comm == "etcd" {
			found = append(found, p)
		}
	}
	return found
}

// descendants lists the processes below pid from /proc.
func descendants(pid int) []proc {
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	Expect(err).NotTo(HaveOccurred())
	children := map[int][]proc{}
	for _, path := range stats {
		data, err := os.ReadFile(path)
		if err != nil {
			continue // the process ended meanwhile
		}
		// pid (comm) state ppid ...; comm may hold spaces and parentheses.
		open, end := bytes.IndexByte(data, '('), bytes.LastIndexByte(data, ')')
		if open < 0 || end < open {
			continue
		}
		fields := strings.Fields(string(data[end+1:]))
		if len(fields) < 2 {
			continue
		}
		self, err1 := strconv.Atoi(strings.TrimSpace(string(data[:open])))
		parent, err2 := strconv.Atoi(fields[1])
		if err1 != nil || err2 != nil {
			continue
		}
		children[parent] = append(children[parent], proc{pid: self, comm: string(data[open+1 : end])})
	}
	var all []proc
	queue := []int{pid}
	for len(queue) > 0 {
		for _, c := range children[queue[0]] {
			all = append(all, c)
			queue = append(queue, c.pid)
		}
		queue = queue[1:]
	}
	return all
}

// newProcs returns the processes of after that are not in before.
func newProcs(before, after []proc) []proc {
	seen := map[int]bool{}
	for _, p := range before {
		seen[p.pid] = true
	}
	var fresh []proc
	for _, p := range after {
		if !seen[p.pid] {
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
