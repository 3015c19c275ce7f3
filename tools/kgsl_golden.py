#!/usr/bin/env python3
"""Golden KGSL command streams from an independent implementation: tinygrad's QCOM runtime.

Runs tinygrad 0.14.0's own command-building code (tinygrad/runtime/ops_qcom.py: QCOMDevice, QCOMProgram,
QCOMArgsState, QCOMComputeQueue, launched through HCQProgram.__call__ in runtime/support/hcq.py) with the
ioctl and mmap layer replaced by a recorder, so no device is needed: GPU objects are anonymous host
memory (the SVM convention, the CPU address is the GPU address), GPU_COMMAND snapshots the submitted
IB and executes its memory writes (CP_EVENT_WRITE) so tinygrad's waits complete.

For every case it writes tests/kgsl/golden/<case>.txt: the program binaries (built here in the
layout tinygrad's QCOMProgram._parse_lib reads, so both launchers parse the same bytes), the buffers
and launches, and for each launch the IB and the kernel-argument block tinygrad produced, with
addresses normalised (see normalise()).
tests/kgsl/test_golden.cpp makes the same launches with uopcg and compares dword for dword.

A developer tool: `pip install tinygrad==0.14.0`, then `python3 tools/kgsl_golden.py`. Nothing in
the build or CI runs it; its outputs are committed. `--check` regenerates into memory and fails if
a committed file differs.
"""
import argparse, ctypes, os, struct, subprocess, sys
from dataclasses import dataclass, field

GOLDEN_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "kgsl", "golden")
TINYGRAD_VERSION = "0.14.0"

# ---------------------------------------------------------------------------------------------
# Program binaries (Qualcomm "program library" layout, as QCOMProgram._parse_lib reads it), written
# independently of tests/kgsl/blob_builder.hpp: header with the section count at 0x18, 20-byte section records from
# 0x30, program record (register footprint), kernel descriptor (entry, private/shared memory,
# samplers, branch stack, name), argument records after the name, immediate-constant records, code.

@dataclass
class Program:
    name: str
    code_bytes: int
    args: list  # [(offset_words, type)] in parameter order; type 0 value, 1 texture, 2 writable image
    pvtmem: int = 0
    shmem: int = 0
    fregs: int = 3
    hregs: int = 0
    entry: int = 0
    branchstack_x2: int = 0
    samplers: int = 0
    imms: list = field(default_factory=list)  # [(value, offset_units, is32)]

    def blob(self) -> bytes:
        b = bytearray(0x300 + 0x158)
        prog, desc = 0x200, 0x300
        def put(at, v):
            if len(b) < at + 4: b.extend(bytes(at + 4 - len(b)))
            struct.pack_into("<I", b, at, v)
        put(0x18, 12)
        put(prog + 0x14, self.fregs); put(prog + 0x18, self.hregs)
        for off, v in ((0xC4, self.entry), (0xC8, self.pvtmem), (0xD8, self.shmem), (0xDC, self.samplers),
                       (0x108, self.branchstack_x2)):
            put(desc + off, v)
        name = self.name.encode()
        at = desc + 0x158
        b[at:at + len(name)] = name
        at = (at + len(name) + 3) // 4 * 4
        b.extend(bytes(max(0, at - len(b))))
        for i in range(0, 8 * self.samplers, 4): put(at + i, 0)  # the sampler words tinygrad skips
        at += 8 * self.samplers
        for off, typ in self.args:
            for i, v in enumerate((32, 0, 0, off, 0, 0, 0, typ)): put(at + 4 * i, v)
            at += 32
        for i in range(8): put(at + 4 * i, 0)  # terminator record: length 0
        at += 32
        consts = at
        for value, units, is32 in self.imms:
            for i in range(10): put(at + 4 * i, 0)
            put(at, value); put(at + 16, units); put(at + 24, is32)
            at += 40
        image = at
        code = code_bytes(self.code_bytes)
        b.extend(bytes(image + len(code) - len(b)))
        b[image:image + len(code)] = code
        def section(slot, off, size):
            for i, v in enumerate((slot, off, size, 1, 0)): put(0x30 + 20 * slot + 4 * i, v)
        for s in range(12): section(s, 0, 0)
        section(0, prog, 0x40); section(6, consts, 40 * len(self.imms)); section(7, image, len(code))
        section(10, image, len(code)); section(11, desc, 0x158)
        return bytes(b)

def code_bytes(n):
    """The machine code of every program: never executed, so any bytes do; a fixed pattern keeps the
    golden files small (they carry the blob up to its code, then `code N`)."""
    return bytes((0xC0 + 7 * i) & 0xFF for i in range(n))

# Arguments of a launch: ("buffer", index), ("scalar", width_bytes, value), ("image", index)
@dataclass
class Launch:
    program: int
    global_items: tuple
    local: tuple
    args: list

@dataclass
class Case:
    name: str
    what: str
    programs: list
    buffers: list                  # bytes per buffer
    launches: list
    images: list = field(default_factory=list)  # [(width, height, "f32" | "f16")]

def buffer_args(n, first=0x50):
    return [(first + 4 * i, 0) for i in range(n)]

CASES = [
    Case("one_buffer", "1 buffer and an int scalar, pvtmem 0, one 64-item work-group",
              [Program("r_fill", 256, buffer_args(2))], [4096],
              [Launch(0, (64, 1, 1), (64, 1, 1), [("buffer", 0), ("scalar", 4, 7)])]),
    Case("vector_add", "3 buffers and an int, 32 work-groups of 128 (what tinygrad runs for a vector add)",
              [Program("E_add", 384, buffer_args(4))], [16384, 16384, 16384],
              [Launch(0, (4096, 1, 1), (128, 1, 1), [("buffer", 0), ("buffer", 1), ("buffer", 2), ("scalar", 4, 4096)])]),
    Case("eight_buffers_2d", "8 buffers and scalars of 1, 2, 4 and 8 bytes, a 2D launch",
              [Program("r_8", 512, buffer_args(12), fregs=8, hregs=3)], [1024 * (i + 1) for i in range(8)],
              [Launch(0, (128, 32, 1), (16, 8, 1), [("buffer", i) for i in range(8)] +
                              [("scalar", 1, 0xAB), ("scalar", 2, 0xFFFD), ("scalar", 4, 0x80000001), ("scalar", 8, 0x123456789ABCDEF0)])]),
    Case("private_600", "600 bytes of private memory per item, registers, branch stack, shared memory, entry offset, 3D launch",
              [Program("r_pvt", 640, buffer_args(2), pvtmem=600, shmem=4096, fregs=12, hregs=4, entry=0x40, branchstack_x2=4)],
              [8192], [Launch(0, (8, 12, 16), (4, 4, 4), [("buffer", 0), ("scalar", 4, 3)])]),
    Case("private_3000", "3000 bytes of private memory per item (a 32 MiB stack), fractional work-group count",
              [Program("r_spill", 1024, buffer_args(3), pvtmem=3000, fregs=20)], [65536, 65536],
              [Launch(0, (1000, 1, 1), (64, 1, 1), [("buffer", 0), ("buffer", 1), ("scalar", 4, 1000)])]),
    Case("shader_9000", "a 9000-byte shader (71 units of 128 bytes, more than the 64-unit instruction cache)",
              [Program("r_big", 9000, buffer_args(2))], [4096],
              [Launch(0, (256, 1, 1), (32, 1, 1), [("buffer", 0), ("scalar", 4, 5)])]),
    Case("shader_16k_private", "a 16 KiB shader with private memory",
              [Program("r_big_pvt", 16384, buffer_args(3), pvtmem=1024, fregs=16)], [4096, 4096],
              [Launch(0, (512, 2, 1), (64, 2, 1), [("buffer", 0), ("buffer", 1), ("scalar", 4, 9)])]),
    Case("immediates", "immediate constants the driver preloads (2- and 4-byte)",
              [Program("r_imm", 256, buffer_args(2), imms=[(0x3F800000, 0x60, 1), (0x1234, 0xC4, 0), (0xDEADBEEF, 0x70, 1)])],
              [4096], [Launch(0, (64, 1, 1), (64, 1, 1), [("buffer", 0), ("scalar", 4, 1)])]),
    Case("images", "a writable image, a read image with a sampler, and a buffer",
              [Program("r_img", 512, [(0, 2), (0, 1), (0x50, 0), (0x54, 0)], samplers=1)], [4096],
              [Launch(0, (16, 4, 1), (16, 4, 1), [("image", 0), ("image", 1), ("buffer", 0), ("scalar", 4, 2)])],
              images=[(16, 4, "f32"), (8, 4, "f16")]),
    Case("sequence", "three launches in a row: the timeline chain, and the stack growing for the third",
              [Program("E_a", 256, buffer_args(3)), Program("E_b", 384, buffer_args(2), fregs=5),
                Program("E_c", 512, buffer_args(2), pvtmem=1536)],
              [4096, 4096, 4096],
              [Launch(0, (1024, 1, 1), (256, 1, 1), [("buffer", 0), ("buffer", 1), ("buffer", 2)]),
                Launch(1, (64, 64, 1), (8, 8, 1), [("buffer", 2), ("scalar", 4, 64)]),
                Launch(2, (100, 1, 1), (32, 1, 1), [("buffer", 1), ("scalar", 4, 100)])]),
]

# ---------------------------------------------------------------------------------------------
# Address normalisation. Both launchers place the same objects at different addresses, so every
# 64-bit address (a lo dword followed by its hi dword, 4-byte aligned in the stream or the kernarg
# block) that lies inside one of the launch's named objects becomes two tokens, "lo:ROLE+0xOFF" and
# "hi:ROLE+0xOFF"; every other dword stays its hex value. The roles and their extents:
#   signal    the timeline signal's value word (16 bytes)          dummy    the cache-flush sink
#   shaderP   program P's machine code                             stack    the private-stack object
#   kernargs  this launch's kernel-argument block, located by the launch's constant load
#             (CP_LOAD_STATE6, constants, SB6_CS_SHADER): both launchers take it from a ring
#   border    the border-colour table                              bufN, imgN  the case's buffers/images
# tests/kgsl/test_golden.cpp applies the same rule to uopcg's stream with uopcg's objects.

def constant_load_source(ib):
    at = 0
    while at < len(ib):
        h = ib[at]
        n = h & 0x7F if h >> 28 == 4 else h & 0x3FFF
        if h >> 28 == 7 and (h >> 16) & 0x7F == 0x34 and n == 3:
            ctrl = ib[at + 1]
            if (ctrl >> 14) & 3 == 1 and (ctrl >> 18) & 0xF == 13: return ib[at + 2] | ib[at + 3] << 32
        at += 1 + n
    raise RuntimeError("no constant load in the IB")

def normalise(words, roles):
    out, i = [], 0
    while i < len(words):
        if i + 1 < len(words):
            a = words[i] | words[i + 1] << 32
            hit = next(((name, a - base) for name, base, size in roles if base <= a < base + size), None)
            if hit:
                out += [f"lo:{hit[0]}+0x{hit[1]:x}", f"hi:{hit[0]}+0x{hit[1]:x}"]
                i += 2
                continue
        out.append(f"0x{words[i]:08x}")
        i += 1
    return out

# ---------------------------------------------------------------------------------------------
# The recorder that replaces tinygrad's FileIOInterface for /dev/kgsl-3d0.

def record(case):
    import tinygrad.runtime.support.hcq as hcq
    from tinygrad.runtime import ops_qcom
    from tinygrad.runtime.autogen import kgsl
    from tinygrad.device import TinyELF, BufferSpec
    from tinygrad.dtype import dtypes
    from tinygrad.helpers import Target

    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]

    class Recorder(hcq.FileIOInterface):
        """The KGSL node: object ids, one context, A630's device info, and submissions recorded."""
        def __init__(self, path="", flags=0, fd=None):
            assert path == "/dev/kgsl-3d0", path
            self.path, self.fd = path, -1
            self.sizes, self.maps, self.next_id, self.ibs = {}, [], 1, []
        def __del__(self): pass
        def ioctl(self, request, arg):
            nr = request & 0xFF
            if nr == 0x45:    # GPUOBJ_ALLOC
                arg.id, arg.mmapsize = self.next_id, arg.size
                self.sizes[arg.id], self.next_id = arg.size, self.next_id + 1
            elif nr == 0x13: arg.drawctxt_id = 1                         # DRAWCTXT_CREATE
            elif nr == 0x02:                                             # GETPROPERTY(DEVICE_INFO)
                assert arg.type == kgsl.KGSL_PROP_DEVICE_INFO
                kgsl.struct_kgsl_devinfo.from_address(arg.value).chip_id = 0x06030001
            elif nr == 0x4A:                                             # GPU_COMMAND
                assert arg.numcmds == 1
                obj = kgsl.struct_kgsl_command_object.from_address(arg.cmdlist)
                ib = list((ctypes.c_uint32 * (obj.size // 4)).from_address(obj.gpuaddr))
                self.ibs.append(ib)
                self.execute(ib)
                arg.timestamp = len(self.ibs)
            elif nr in (0x32, 0x07, 0x46): pass  # SETPROPERTY, WAITTIMESTAMP_CTXTID, GPUOBJ_FREE
            else: raise RuntimeError(f"unexpected ioctl {request:#x}")
            return 0
        def mmap(self, start, size, prot, flags, offset):
            p = libc.mmap(None, size, 3, 0x22, -1, 0)  # PROT_READ|WRITE, MAP_PRIVATE|ANONYMOUS
            assert p not in (None, ctypes.c_void_p(-1).value)
            self.maps.append((p, size))
            return p
        @staticmethod
        def execute(ib):
            # The only memory writes of these IBs: CP_EVENT_WRITE with an address (signal and dummy values).
            at = 0
            while at < len(ib):
                h = ib[at]
                n = h & 0x7F if h >> 28 == 4 else h & 0x3FFF
                if h >> 28 == 7 and (h >> 16) & 0x7F == 0x46 and n == 4:
                    ctypes.c_uint32.from_address(ib[at + 2] | ib[at + 3] << 32).value = ib[at + 4]
                at += 1 + n

    ops_qcom.FileIOInterface = Recorder

    class RecordedQCOMDevice(ops_qcom.QCOMDevice):
        renderer = None  # the vendor-CL program path (not IR3); no compiler is needed to launch binaries

    dev = RecordedQCOMDevice("QCOM")
    fio = dev.fd
    scalar_dtype = {1: dtypes.uint8, 2: dtypes.uint16, 4: dtypes.uint32, 8: dtypes.uint64}
    bufs = [dev.allocator.alloc(n, BufferSpec()) for n in case.buffers]
    imgs = []
    for w, h, fmt in case.images:
        dt = dtypes.float32 if fmt == "f32" else dtypes.float16
        imgs.append((dt, (h, w, 4), dev.allocator.alloc(w * h * 4 * dt.itemsize, BufferSpec())))

    programs = []
    for p in case.programs:
        lib = p.blob()
        programs.append((p, lib, None))

    launches = []
    for L in case.launches:
        p, lib, prg = programs[L.program]
        sig, hbufs, vals = [], [], []
        slot = 0
        for a in L.args:
            if a[0] == "image":
                dt, shape, b = imgs[a[1]]
                sig.append((None, slot, dt, shape)); hbufs.append(b); slot += 1
        for a in L.args:
            if a[0] == "buffer":
                sig.append((None, slot, dtypes.float32, (case.buffers[a[1]] // 4,)))
                hbufs.append(bufs[a[1]])
                slot += 1
        for a in L.args:
            if a[0] == "scalar":
                sig.append((None, slot, scalar_dtype[a[1]], ())); vals.append(a[2]); slot += 1
        if prg is None:
            prg = ops_qcom.QCOMProgram(dev, TinyELF(lib, p.name, Target(), tuple(sig)))
            programs[L.program] = (p, lib, prg)
        groups = tuple(g / l if g % l else g // l for g, l in zip(L.global_items, L.local))
        prg(*hbufs, global_size=groups, local_size=L.local, vals=tuple(vals))
        ib = fio.ibs[-1]
        kernargs = constant_load_source(ib)
        kwords = list((ctypes.c_uint32 * (prg.kernargs_alloc_size // 4)).from_address(kernargs))
        roles = [("signal", dev.timeline_signal.value_addr, 16), ("dummy", dev.dummy_addr, 0x1000),
                          ("stack", dev._stack.va_addr, dev._stack.size), ("kernargs", kernargs, prg.kernargs_alloc_size),
                          ("border", dev.border_color_buf.va_addr, 0x1000)]
        roles += [(f"shader{i}", q[2].lib_gpu.va_addr, q[2].lib_gpu.size) for i, q in enumerate(programs) if q[2] is not None]
        roles += [(f"buf{i}", b.va_addr, n) for i, (b, n) in enumerate(zip(bufs, case.buffers))]
        roles += [(f"img{i}", b.va_addr, b.size) for i, (_, _, b) in enumerate(imgs)]
        nib, nk = normalise(ib, roles), normalise(kwords, roles)
        # Every address must have been named: a raw address left in the output would make it depend on
        # where this process's memory happened to be.
        for words in (ib, kwords):
            for i in range(len(words) - 1):
                a = words[i] | words[i + 1] << 32
                if any(base <= a < base + size for base, size in fio.maps) and not any(base <= a < base + size for _, base, size in roles):
                    raise RuntimeError(f"{case.name}: unnamed GPU address {a:#x} in the recorded stream")
        launches.append((L, nib, nk))
    return programs, launches

def render(case) -> str:
    programs, launches = record(case)
    out = [f"# KGSL launch streams recorded from tinygrad {TINYGRAD_VERSION} (tinygrad/runtime/ops_qcom.py) by",
                  "# tools/kgsl_golden.py; regenerate with it, do not edit. Addresses are normalised (see the tool).",
                  f"case {case.name}", f"# {case.what}"]
    for i, (p, lib, _) in enumerate(programs):
        head = lib[:len(lib) - p.code_bytes]
        assert lib[len(head):] == code_bytes(p.code_bytes)
        out.append(f"program {i} {p.name}")
        out += [f"blob {head[o:o + 48].hex()}" for o in range(0, len(head), 48)]
        out.append(f"code {p.code_bytes}")
    for i, n in enumerate(case.buffers): out.append(f"buffer {i} {n}")
    for i, (w, h, fmt) in enumerate(case.images): out.append(f"image {i} {w} {h} {fmt}")
    for L, ib, k in launches:
        out.append("launch {} global {} {} {} local {} {} {}".format(L.program, *L.global_items, *L.local))
        for a in L.args:
            if a[0] == "scalar": out.append(f"arg scalar {a[1]} 0x{a[2]:x}")
            else: out.append(f"arg {a[0]} {a[1]}")
        for title, words in (("ib", ib), ("kernargs", k)):
            out.append(f"{title} {len(words)}")
            out += [" ".join(words[o:o + 8]) for o in range(0, len(words), 8)]
    out.append("end")
    return "\n".join(out) + "\n"

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=GOLDEN_DIR)
    ap.add_argument("--check", action="store_true", help="fail if a committed file differs from a fresh recording")
    ap.add_argument("--record", metavar="CASE", help=argparse.SUPPRESS)  # one case, in a fresh process, to stdout
    args = ap.parse_args()
    if args.record:
        sys.stdout.write(render(next(c for c in CASES if c.name == args.record)))
        return
    try:
        import importlib.metadata
        v = importlib.metadata.version("tinygrad")
    except Exception:
        sys.exit("tinygrad is not installed: pip install tinygrad==" + TINYGRAD_VERSION)
    if v != TINYGRAD_VERSION: sys.exit(f"tinygrad {v} is installed; the goldens are defined against {TINYGRAD_VERSION}")
    os.makedirs(args.out, exist_ok=True)
    bad = 0
    for case in CASES:
        # Each case records in a process of its own: tinygrad keeps signal pages and devices in class
        # state, and every case must start from a fresh device (timeline value 1).
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "--record", case.name], capture_output=True, text=True)
        if r.returncode != 0: sys.exit(f"recording {case.name} failed:\n{r.stderr}")
        text = r.stdout
        path = os.path.join(args.out, case.name + ".txt")
        if args.check:
            old = open(path).read() if os.path.exists(path) else None
            if old != text:
                print(f"{path}: differs from a fresh recording")
                bad += 1
        else:
            with open(path, "w") as f: f.write(text)
            print(f"wrote {path}")
    sys.exit(1 if bad else 0)

if __name__ == "__main__":
    main()
