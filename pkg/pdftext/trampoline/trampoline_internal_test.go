package trampoline

import (
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// The filter assembles (every jump within classic BPF's 255 instructions)
// and starts with the architecture check, so another ABI's numbers never
// reach the deny-list.
func TestSeccompProgram(t *testing.T) {
	prog := seccompProgram()
	require.NotNil(t, prog, "no filter for this architecture")
	require.Less(t, len(prog), 4096)
	require.Equal(t, unix.SockFilter{Code: ldW, K: offArch}, prog[0])
	require.Equal(t, uint32(seccompArch), prog[1].K)
	require.Equal(t, unix.SockFilter{Code: ret, K: unix.SECCOMP_RET_KILL_PROCESS}, prog[len(prog)-1])
}

func TestParseSandboxSpec(t *testing.T) {
	s, err := parseSandboxSpec([]string{"--dir", "/tmp/x", "--uid", "2000000001", "--ns", "--rlimit", "9:64:65", "--", "/bin/prog", "--dir", "a"})
	require.NoError(t, err)
	require.Equal(t, sandboxSpec{dir: "/tmp/x", uid: 2000000001, namespaces: true,
		limits: []rlimit{{res: 9, cur: 64, max: 65}}, argv: []string{"/bin/prog", "--dir", "a"}}, s)
	for _, bad := range [][]string{
		{"--dir", "/tmp/x"},                      // no program
		{"--", "/bin/prog"},                      // no directory
		{"--dir", "/x", "--uid", "0", "--", "p"}, // uid 0 would mean root
		{"--dir", "/x", "--rlimit", "9:1", "--", "p"},
		{"--dir", "/x", "--what", "--", "p"},
	} {
		_, err := parseSandboxSpec(bad)
		require.Error(t, err, "%q", bad)
	}
}
