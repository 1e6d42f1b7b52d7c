package pulltest

import (
	"path"
	"sort"
	"strings"
)

// sortedKeys are the paths of the files, sorted.
func sortedKeys(files Files) []string {
	keys := make([]string, 0, len(files))
	for k := range files {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// parents are the directories above p, outermost first: "a/b/c" gives "a", "a/b".
func parents(p string) []string {
	var dirs []string
	for dir := path.Dir(p); dir != "." && dir != "/"; dir = path.Dir(dir) {
		dirs = append(dirs, strings.TrimPrefix(dir, "/"))
	}
	for i, j := 0, len(dirs)-1; i < j; i, j = i+1, j-1 {
		dirs[i], dirs[j] = dirs[j], dirs[i]
	}
	return dirs
}

// Union is the references of the lists, each once, sorted.
func Union(lists ...[]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, list := range lists {
		for _, ref := range list {
			if !seen[ref] {
				seen[ref] = true
				out = append(out, ref)
			}
		}
	}
	sort.Strings(out)
	return out
}
