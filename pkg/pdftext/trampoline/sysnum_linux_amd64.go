// Code generated from golang.org/x/sys/unix's zsysnum_linux_amd64.go (v0.49.0); DO NOT EDIT.
// TestSyscallNumbers checks the table of the architecture the tests run on.

package trampoline

// System call numbers of this architecture.
const (
	nrClone           = 56
	nrClone3          = 435
	nrIoctl           = 16
	nrMemfdCreate     = 319
	nrSeccomp         = 317
	nrPrlimit64       = 302
	nrExecve          = 59
	nrPrctl           = 157
	nrFcntl           = 72
	nrCapset          = 126
	nrSetgroups       = 116
	nrSetresuid       = 117
	nrSetresgid       = 119
	nrPtrace          = 101
	nrProcessVmReadv  = 310
	nrProcessVmWritev = 311
	nrProcessMadvise  = 440
	nrKcmp            = 312
	nrPidfdGetfd      = 438
	nrMount           = 165
	nrUmount2         = 166
	nrPivotRoot       = 155
	nrChroot          = 161
	nrUnshare         = 272
	nrSetns           = 308
	nrFsopen          = 430
	nrFsconfig        = 431
	nrFsmount         = 432
	nrFspick          = 433
	nrMoveMount       = 429
	nrOpenTree        = 428
	nrMountSetattr    = 442
	nrOpenByHandleAt  = 304
	nrNameToHandleAt  = 303
	nrSocket          = 41
	nrSocketpair      = 53
	nrBpf             = 321
	nrPerfEventOpen   = 298
	nrUserfaultfd     = 323
	nrFanotifyInit    = 300
	nrIoUringSetup    = 425
	nrIoUringEnter    = 426
	nrIoUringRegister = 427
	nrKeyctl          = 250
	nrAddKey          = 248
	nrRequestKey      = 249
	nrInitModule      = 175
	nrFinitModule     = 313
	nrDeleteModule    = 176
	nrKexecLoad       = 246
	nrKexecFileLoad   = 320
	nrReboot          = 169
	nrSwapon          = 167
	nrSwapoff         = 168
	nrAcct            = 163
	nrQuotactl        = 179
	nrQuotactlFd      = 443
	nrSettimeofday    = 164
	nrClockSettime    = 227
	nrClockAdjtime    = 305
	nrAdjtimex        = 159
	nrSethostname     = 170
	nrSetdomainname   = 171
	nrSyslog          = 103
	nrPersonality     = 135
	nrVhangup         = 153
	nrLookupDcookie   = 212
	nrMovePages       = 279
	nrMigratePages    = 256
	nrNfsservctl      = 180
	nrIopl            = 172
	nrIoperm          = 173
	nrModifyLdt       = 154
	nrUselib          = 134
	nrUstat           = 136
	nrSysfs           = 139
	nrSysctl          = 156
	nrCreateModule    = 174
	nrGetKernelSyms   = 177
	nrQueryModule     = 178
)

// archDeniedSyscalls are the denied calls only this architecture has.
var archDeniedSyscalls = []uint32{nrIopl, nrIoperm, nrModifyLdt, nrUselib, nrUstat, nrSysfs, nrSysctl, nrCreateModule, nrGetKernelSyms, nrQueryModule}
