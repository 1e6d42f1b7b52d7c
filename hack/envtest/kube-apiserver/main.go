// Command kube-apiserver is the upstream Kubernetes API server, built from Go modules so that
// envtest needs no download from outside the Go module proxy.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	os.Exit(cli.Run(app.NewAPIServerCommand()))
}
