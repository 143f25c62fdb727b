// Code generated from golang.org/x/sys/unix's zsysnum_linux_arm64.go (v0.49.0); DO NOT EDIT.
// TestSyscallNumbers checks the table of the architecture the tests run on.

package trampoline

// System call numbers of this architecture.
const (
	nrClone           = 220
	nrClone3          = 435
	nrIoctl           = 29
	nrMemfdCreate     = 279
	nrSeccomp         = 277
	nrPrlimit64       = 261
	nrExecve          = 221
	nrPrctl           = 167
	nrFcntl           = 25
	nrCapset          = 91
	nrSetgroups       = 159
	nrSetresuid       = 147
	nrSetresgid       = 149
	nrPtrace          = 117
	nrProcessVmReadv  = 270
	nrProcessVmWritev = 271
	nrProcessMadvise  = 440
	nrKcmp            = 272
	nrPidfdGetfd      = 438
	nrMount           = 40
	nrUmount2         = 39
	nrPivotRoot       = 41
	nrChroot          = 51
	nrUnshare         = 97
	nrSetns           = 268
	nrFsopen          = 430
	nrFsconfig        = 431
	nrFsmount         = 432
	nrFspick          = 433
	nrMoveMount       = 429
	nrOpenTree        = 428
	nrMountSetattr    = 442
	nrOpenByHandleAt  = 265
	nrNameToHandleAt  = 264
	nrSocket          = 198
	nrSocketpair      = 199
	nrBpf             = 280
	nrPerfEventOpen   = 241
	nrUserfaultfd     = 282
	nrFanotifyInit    = 262
	nrIoUringSetup    = 425
	nrIoUringEnter    = 426
	nrIoUringRegister = 427
	nrKeyctl          = 219
	nrAddKey          = 217
	nrRequestKey      = 218
	nrInitModule      = 105
	nrFinitModule     = 273
	nrDeleteModule    = 106
	nrKexecLoad       = 104
	nrKexecFileLoad   = 294
	nrReboot          = 142
	nrSwapon          = 224
	nrSwapoff         = 225
	nrAcct            = 89
	nrQuotactl        = 60
	nrQuotactlFd      = 443
	nrSettimeofday    = 170
	nrClockSettime    = 112
	nrClockAdjtime    = 266
	nrAdjtimex        = 171
	nrSethostname     = 161
	nrSetdomainname   = 162
	nrSyslog          = 116
	nrPersonality     = 92
	nrVhangup         = 58
	nrLookupDcookie   = 18
	nrMovePages       = 239
	nrMigratePages    = 238
	nrNfsservctl      = 42
)

// archDeniedSyscalls are the denied calls only this architecture has.
var archDeniedSyscalls = []uint32{}
