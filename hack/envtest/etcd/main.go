// Command etcd is the upstream etcd server, built from Go modules so that envtest needs no
// download from outside the Go module proxy.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
