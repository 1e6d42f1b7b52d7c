package testenv

import (
	"errors"
	"testing"

	kerrors "k8s.io/apimachinery/pkg/util/errors"
)

func TestUnlessKilled(t *testing.T) {
	var said []string
	tell := func(e error) { said = append(said, e.Error()) }
	slow := errors.New("timeout waiting for process kube-apiserver to stop")
	if err := unlessKilled(kerrors.NewAggregate([]error{slow}), tell); err != nil || len(said) != 1 {
		t.Fatalf("a killed kube-apiserver: %v (said %v), want nil, said once", err, said)
	}
	other := errors.New("unable to signal for process etcd to stop: no such process")
	err := unlessKilled(kerrors.NewAggregate([]error{slow, other}), tell)
	if err == nil || err.Error() != other.Error() {
		t.Fatalf("a killed kube-apiserver and an etcd that could not be signalled: %v, want the etcd error", err)
	}
	if err := unlessKilled(nil, tell); err != nil {
		t.Fatal(err)
	}
}
