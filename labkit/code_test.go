package labkit

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFindRootReadsTheModulePath(t *testing.T) {
	t.Setenv("SYNCLAB_ROOT", "")
	t.Setenv("GONB_DIR", "")
	tests := []struct {
		name, gomod string
		found       bool
	}{
		{"plain", "module synclab\n\ngo 1.26\n", true},
		{"comment first", "// SyncLab\nmodule synclab\n", true},
		{"quoted, no newline", `module "synclab"`, true},
		{"CRLF", "module synclab\r\n", true},
		{"other module", "module synclabx\n", false},
	}
	for _, tc := range tests {
		root := t.TempDir()
		sub := filepath.Join(root, "a", "b")
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte(tc.gomod), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Chdir(sub)
		got := FindRoot()
		if tc.found && got != root || !tc.found && got == root {
			t.Errorf("%s: FindRoot() = %q, root %q, want found %v", tc.name, got, root, tc.found)
		}
	}
}
