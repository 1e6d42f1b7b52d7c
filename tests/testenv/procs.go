package testenv

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Process is a process found in /proc.
type Process struct {
	PID int
	// Command is the process's command name (comm), as ps shows it.
	Command string
}

// ChildProcesses returns the processes below this process, children and their children, as
// /proc shows them now. A suite calls it after stopping its environments to make sure no
// kube-apiserver or etcd survived.
func ChildProcesses() ([]Process, error) {
	children, err := processTree()
	if err != nil {
		return nil, err
	}
	var all []Process
	queue := []int{os.Getpid()}
	for len(queue) > 0 {
		for _, c := range children[queue[0]] {
			all = append(all, c)
			queue = append(queue, c.PID)
		}
		queue = queue[1:]
	}
	return all, nil
}

// ControlPlaneProcesses returns the kube-apiserver and etcd processes among ChildProcesses.
func ControlPlaneProcesses() ([]Process, error) {
	all, err := ChildProcesses()
	if err != nil {
		return nil, err
	}
	var found []Process
	for _, p := range all {
		if p.Command == "kube-apiserver" || p.Command == "etcd" {
			found = append(found, p)
		}
	}
	return found, nil
}

// processTree reads every process's parent from /proc and returns the children of each.
func processTree() (map[int][]Process, error) {
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		return nil, fmt.Errorf("listing processes: %w", err)
	}
	children := map[int][]Process{}
	for _, path := range stats {
		data, err := os.ReadFile(path)
		if err != nil {
			continue // the process ended meanwhile
		}
		p, parent, ok := parseStat(data)
		if ok {
			children[parent] = append(children[parent], p)
		}
	}
	return children, nil
}

// parseStat reads the pid, command and parent pid of a /proc/<pid>/stat line: "pid (comm)
// state ppid ...", where comm may hold spaces and parentheses.
func parseStat(data []byte) (Process, int, bool) {
	open, end := bytes.IndexByte(data, '('), bytes.LastIndexByte(data, ')')
	if open < 0 || end < open {
		return Process{}, 0, false
	}
	fields := strings.Fields(string(data[end+1:]))
	if len(fields) < 2 {
		return Process{}, 0, false
	}
	pid, err1 := strconv.Atoi(strings.TrimSpace(string(data[:open])))
	parent, err2 := strconv.Atoi(fields[1])
	if err1 != nil || err2 != nil {
		return Process{}, 0, false
	}
	return Process{PID: pid, Command: string(data[open+1 : end])}, parent, true
}
