// Package argocd holds what Argo CD needs to understand a ClusterGroupUpgrade: the Lua health
// assessment (health.lua, the canonical copy, embedded here) and the argocd-cm patch that
// installs it. Health runs the script the way Argo CD does, with gopher-lua, the interpreter
// Argo CD embeds, so that tests can check it on real objects.
package argocd

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// HealthKey is the argocd-cm key that holds the health script of a ClusterGroupUpgrade.
const HealthKey = "resource.customizations.health.ran.openshift.io_ClusterGroupUpgrade"

// statuses are the health statuses Argo CD accepts from a script.
var statuses = []string{"Healthy", "Progressing", "Degraded", "Suspended", "Missing", "Unknown"}

//go:embed health.lua
var script string

// Script returns the Lua health script.
func Script() string { return script }

// ConfigMapPatch returns the patch of Argo CD's argocd-cm ConfigMap that installs Script, as
// config/argocd/argocd-cm-patch.yaml holds it.
func ConfigMapPatch() string {
	var b strings.Builder
	b.WriteString(`# Installs the health assessment of ClusterGroupUpgrades in Argo CD (see docs/gitops.md):
#   kubectl -n argocd patch configmap argocd-cm --patch-file config/argocd/argocd-cm-patch.yaml
# Written from pkg/argocd/health.lua by ` + "`go test ./pkg/argocd -update`" + `; do not edit.
apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-cm
data:
  ` + HealthKey + `: |
`)
	for line := range strings.Lines(script) {
		if strings.TrimSpace(line) != "" {
			b.WriteString("    ")
		}
		b.WriteString(line)
	}
	return b.String()
}

// Object turns v, a ClusterGroupUpgrade or any object, into the JSON map Argo CD hands the
// script.
func Object(v any) (map[string]any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encoding the object: %w", err)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("decoding the object: %w", err)
	}
	return out, nil
}

// Health runs the script on obj, a ClusterGroupUpgrade decoded from JSON, as Argo CD does:
// obj is the global obj and the script returns {status = ..., message = ...}.
func Health(obj map[string]any) (status, message string, err error) {
	l := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer l.Close()
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{
		{lua.LoadLibName, lua.OpenPackage}, {lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable}, {lua.StringLibName, lua.OpenString}, {lua.MathLibName, lua.OpenMath},
	} {
		if err := l.CallByParam(lua.P{Fn: l.NewFunction(lib.open), NRet: 0, Protect: true}, lua.LString(lib.name)); err != nil {
			return "", "", fmt.Errorf("opening Lua library %s: %w", lib.name, err)
		}
	}
	l.SetGlobal("obj", toLua(l, obj))
	if err := l.DoString(script); err != nil {
		return "", "", fmt.Errorf("running the health script: %w", err)
	}
	ret, ok := l.Get(-1).(*lua.LTable)
	if !ok {
		return "", "", fmt.Errorf("the health script returned a %s, not a table", l.Get(-1).Type())
	}
	status, message = lua.LVAsString(ret.RawGetString("status")), lua.LVAsString(ret.RawGetString("message"))
	if !slices.Contains(statuses, status) {
		return "", "", fmt.Errorf("the health script returned status %q, which Argo CD does not know", status)
	}
	return status, message, nil
}

// toLua converts a value decoded from JSON into Lua values, as Argo CD does: objects and
// arrays become tables (arrays indexed from 1), numbers LNumber, null nil.
func toLua(l *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case map[string]any:
		t := l.NewTable()
		for k, e := range v {
			t.RawSetString(k, toLua(l, e))
		}
		return t
	case []any:
		t := l.NewTable()
		for i, e := range v {
			t.RawSetInt(i+1, toLua(l, e))
		}
		return t
	case string:
		return lua.LString(v)
	case bool:
		return lua.LBool(v)
	case float64:
		return lua.LNumber(v)
	case int64:
		return lua.LNumber(v)
	case int:
		return lua.LNumber(v)
	default:
		return lua.LNil
	}
}
