package prom

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// alertmanagerConfigFile routes every alert to one receiver that notifies no one: tests read
// alerts and silences through the API.
const alertmanagerConfigFile = `route:
  receiver: none
receivers:
  - name: none
`

// Alertmanager is a running Alertmanager, on its own (clustering off).
type Alertmanager struct {
	proc *process
}

// StartAlertmanager writes a configuration into dir and runs Alertmanager with it on a free
// loopback port, storing its silences and notification log in dir, and waits until it is
// ready (bounded by ctx and 30 seconds). The binary is $ALERTMANAGER, else
// prometheus-alertmanager (Debian's name) or alertmanager on the PATH.
func StartAlertmanager(ctx context.Context, dir string) (*Alertmanager, error) {
	path, err := findBinary("ALERTMANAGER", "prometheus-alertmanager", "alertmanager")
	if err != nil {
		return nil, err
	}
	configPath := filepath.Join(dir, "alertmanager.yml")
	if err := os.WriteFile(configPath, []byte(alertmanagerConfigFile), 0o600); err != nil {
		return nil, fmt.Errorf("writing the Alertmanager configuration: %w", err)
	}
	addr, err := freeAddress()
	if err != nil {
		return nil, err
	}
	a := &Alertmanager{proc: &process{
		name: "alertmanager", path: path, addr: addr, logPath: filepath.Join(dir, "alertmanager.log"),
		args: []string{
			"--config.file=" + configPath,
			"--storage.path=" + filepath.Join(dir, "data"),
			"--web.listen-address=" + addr,
			"--cluster.listen-address=",
		},
	}}
	if err := a.proc.start(ctx); err != nil {
		return nil, err
	}
	return a, nil
}

// URL returns the server's address, "http://127.0.0.1:<port>".
func (a *Alertmanager) URL() string { return a.proc.url() }

// Stop stops the server and waits for it. It returns an error when the server had exited by
// itself.
func (a *Alertmanager) Stop() error { return a.proc.stop() }
