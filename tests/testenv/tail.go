package testenv

import (
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Tail keeps the last bytes a process wrote: a control-plane process's log, read when a
// spec fails.
type Tail struct {
	mu   sync.Mutex
	max  int
	kept []byte
}

// NewTail returns a Tail keeping the last size bytes written.
func NewTail(size int) *Tail { return &Tail{max: size} }

// Write keeps p, dropping what falls out of the last max bytes.
func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.kept = append(t.kept, p...)
	if over := len(t.kept) - t.max; over > 0 {
		// Kept in place, so that the buffer stays near max however long the process runs.
		t.kept = t.kept[:copy(t.kept, t.kept[over:])]
	}
	return len(p), nil
}

// String is what is kept.
func (t *Tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.kept)
}

// How much of each control-plane process's log Start keeps.
const (
	apiServerLogKept = 128 << 10
	etcdLogKept      = 32 << 10
)

// ControlPlaneLog returns the last lines the kube-apiserver and etcd of an environment made
// by Start wrote, restarts included.
func ControlPlaneLog(env *envtest.Environment) string {
	var out string
	if api := env.ControlPlane.APIServer; api != nil {
		if t, ok := api.Err.(*Tail); ok {
			out += "--- kube-apiserver, its last lines:\n" + t.String()
		}
	}
	if etcd := env.ControlPlane.Etcd; etcd != nil {
		if t, ok := etcd.Err.(*Tail); ok {
			out += "--- etcd, its last lines:\n" + t.String()
		}
	}
	return out
}
