"""Vector instructions that scalar code cannot express, for vecmath's loops (AVX-512 only):
in-register table lookups (`vpermps`/`vpermpd`, and `vpermi2ps`/`vpermi2pd` for two registers'
worth), the exponent and mantissa of a float in one instruction each (`vgetexp`, `vgetmant`)
and scaling by a float exponent (`vscalef`), as NumPy's SVML loops use them; and IEEE
maximum/minimum with ordered signed zeros in one instruction (`vrange`, AVX-512DQ), for the
runtime's fmax/fmin.

vecmath's functions are scalar Numba code that LLVM's loop vectorizer widens. It cannot widen
a lookup in a constant vector (an `extractelement` stops it) and a lookup in a constant array
becomes a gather (slow here), and it never emits `vgetmant`. So each of these is a small scalar
function, defined in LLVM IR, whose `vector-function-abi-variant` attribute (LLVM's vector
function ABI) names versions of it for 4, 8 and 16 lanes (float64: 2, 4, 8): the vectorizer
calls the version of its width, one instruction each. Those calls must then be inlined, or every vector register
live across them is spilled around each call (float32 log plus one lookup: 541 us for 1M
values against 229 us without it). Numba runs no inliner after vectorizing, so
`_inline_after_vectorizing` extends its last optimization step: on a module that calls these
functions, and only there, LLVM's always-inliner runs once more. (The remainder loop calls the
scalar version, which is not inlined: a few values per kernel.)

`available()` says whether the kernels being compiled can use them: an x86 CPU with AVX-512F
and VL (the 4- and 8-lane versions) and a Numba whose final optimization step this module could
extend. vecmath falls back to its bit manipulations and full-range polynomials otherwise.
"""
from __future__ import annotations

import functools
import itertools
import struct

import llvmlite.binding as llvm
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

PREFIX = "jitviz_visa_"  # every function defined here; the inliner runs where one is called
_names = itertools.count()

_FLOAT = {np.float32: ("float", "ps", "ss", ir.FloatType, types.float32, (4, 8, 16)),
          np.float64: ("double", "pd", "sd", ir.DoubleType, types.float64, (2, 4, 8))}
_MASK_TYPE = {2: "i8", 4: "i8", 8: "i8", 16: "i16"}


# --- the hook: inline the vector versions after Numba's last optimization ------------------

def _inline_after_vectorizing(optimize):
    @functools.wraps(optimize)
    def optimize_final_module(self):
        optimize(self)
        module = self._final_module
        target_machine = getattr(self._codegen, "_tm", None)  # (None: another Numba)
        if target_machine is not None and any(f.name.startswith(PREFIX)
                                              for f in module.functions):
            tuning = llvm.create_pipeline_tuning_options(speed_level=1)
            builder = llvm.create_pass_builder(target_machine, tuning)
            passes = llvm.create_new_module_pass_manager()
            passes.add_always_inliner_pass()
            passes.add_instruction_combine_pass()
            passes.add_global_dead_code_eliminate_pass()
            passes.run(module, builder)
    optimize_final_module._jitviz_inlines = True
    return optimize_final_module


def _install_hook() -> bool:
    try:
        from numba.core.codegen import CPUCodeLibrary
        optimize = CPUCodeLibrary._optimize_final_module
        if not getattr(optimize, "_jitviz_inlines", False):
            CPUCodeLibrary._optimize_final_module = _inline_after_vectorizing(optimize)
        # (the IR here uses opaque pointers, LLVM's default from 15 on)
        return hasattr(llvm.ModulePassManager, "add_always_inliner_pass") and \
            llvm.llvm_version_info >= (15,)
    except (ImportError, AttributeError):  # another Numba: vecmath keeps its portable code
        return False


_HOOKED = _install_hook()


def available() -> bool:
    """Whether kernels compiled now may call these functions (see the module's docstring)."""
    from .vecmath_core import target_features
    features = target_features().split(",")
    return _HOOKED and "+avx512f" in features and "+avx512vl" in features


# --- LLVM IR of a function and its vector versions ------------------------------------------

def _hex(value, ftype):
    """An LLVM float constant: the double whose value the constant has (exact for float)."""
    v = float(np.float32(value)) if ftype == "float" else float(value)
    return "0x%016X" % struct.unpack("<Q", struct.pack("<d", v))[0]


def _module_text(name, ftype, args, widths, scalar_body, vector_body, declarations):
    """A scalar function `name(%x[, %y])` (argument types `args`) and `name_v<w>` for each
    width, the vector function ABI attribute naming them (`v` per vector argument) and
    `llvm.compiler.used` keeping the vector versions alive until the vectorizer has used
    them."""
    names = ("%x", "%y")
    parts = list(declarations)
    params = ", ".join(f"{t} {n}" for t, n in zip(args, names))
    parts.append(f"define {ftype} @{name}({params}) #0 {{\n{scalar_body}\n}}")
    for w in widths:
        vparams = ", ".join(f"<{w} x {t}> {n}" for t, n in zip(args, names))
        parts.append(f"define <{w} x {ftype}> @{name}_v{w}({vparams}) #1 {{\n"
                     f"{vector_body(w)}\n}}")
    abi = "v" * len(args)
    variants = ",".join(f"_ZGV_LLVM_N{w}{abi}_{name}({name}_v{w})" for w in widths)
    used = ", ".join(f"ptr @{name}_v{w}" for w in widths)
    parts.append(f"@llvm.compiler.used = appending global [{len(widths)} x ptr] [{used}], "
                 f'section "llvm.metadata"')
    parts.append(f'attributes #0 = {{ noinline nounwind "vector-function-abi-variant"='
                 f'"{variants}" }}')
    parts.append("attributes #1 = { alwaysinline nounwind }")
    return "\n".join(parts)


def _scalar_intrinsic(name, text, nb_args, nb_ret, ll_args, ll_ret):
    """A Numba intrinsic calling `name` (one or two arguments), whose module (`text`) each
    kernel links in."""
    library = []

    def codegen(context, builder, signature, args):
        if not library:
            lib = context.codegen().create_library(name)
            lib.add_llvm_module(llvm.parse_assembly(text))
            library.append(lib)
        context.active_code_library.add_linking_library(library[0])
        fn = cgutils.get_or_insert_function(builder.module,
                                            ir.FunctionType(ll_ret, list(ll_args)), name)
        return builder.call(fn, args)

    if len(nb_args) == 1:
        @intrinsic
        def call(typingctx, x):
            return (nb_ret(x), codegen) if (x,) == tuple(nb_args) else None
    else:
        @intrinsic
        def call(typingctx, x, y):
            return (nb_ret(x, y), codegen) if (x, y) == tuple(nb_args) else None
    return call


def _const_vector(values, ftype):
    return f"<{len(values)} x {ftype}> <" + ", ".join(
        f"{ftype} {_hex(v, ftype)}" for v in values) + ">"


def _gather(w, values, ftype, tag, index):
    """IR of values[index] for a <w x i32> index already in range: a chain of extracts and
    inserts from one constant, which X86's instruction selection turns into one variable
    permute (`vpermps`, `vpermpd`) where the constant fits one register."""
    const = _const_vector(values, ftype)
    lines, prev = [], "poison"
    for k in range(w):
        lines += [f"  %{tag}j{k} = extractelement <{w} x i32> {index}, i32 {k}",
                  f"  %{tag}e{k} = extractelement {const}, i32 %{tag}j{k}",
                  f"  %{tag}r{k} = insertelement <{w} x {ftype}> {prev}, {ftype} "
                  f"%{tag}e{k}, i32 {k}"]
        prev = f"%{tag}r{k}"
    return lines, prev


def table(values, dtype):
    """An intrinsic `lookup(i)` -> values[i & (n - 1)] (int32 i, n a power of two up to two
    registers: 32 floats, 16 doubles). One permute of a constant register per vector
    (`vpermps`, `vpermpd`); two registers' worth, at full width, one two-table permute
    (`vpermi2ps`, `vpermi2pd`), else two permutes and a blend."""
    ftype, p, _, lltype, nbtype, widths = _FLOAT[np.dtype(dtype).type]
    n = len(values)
    per_zmm = 16 if ftype == "float" else 8
    sizes = [2 ** k for k in range(1, 6) if 2 ** k <= 2 * per_zmm]
    if n not in sizes:
        raise ValueError(f"vector_isa.table: {n} {np.dtype(dtype).name} values; a table holds "
                         f"{', '.join(map(str, sizes))} of them (two vector registers at "
                         f"most): pad it to the next of these sizes")
    name = f"{PREFIX}table{next(_names)}"
    scalar = (f"  %j = and i32 %x, {n - 1}\n"
              f"  %v = extractelement {_const_vector(values, ftype)}, i32 %j\n"
              f"  ret {ftype} %v")
    half = min(n, per_zmm)
    declarations = []
    if n > per_zmm:
        it = "i32" if ftype == "float" else "i64"
        vt, ivt = f"<{per_zmm} x {ftype}>", f"<{per_zmm} x {it}>"
        declarations.append(f"declare {vt} @llvm.x86.avx512.vpermi2var.{p}.512({vt}, {ivt}, "
                            f"{vt})")

    def vector(w):
        # (the masks as vector `and`s: per-lane ones would hide the permute's pattern)
        splat = lambda v: "<" + ", ".join([f"i32 {v}"] * w) + ">"  # noqa: E731
        vt = f"<{w} x {ftype}>"
        if n > per_zmm and w == per_zmm:  # one vpermi2ps/pd: bit log2(half) picks the table
            it = "i32" if ftype == "float" else "i64"
            index = ["  %m = and <{w} x i32> %x, {mask}".format(w=w, mask=splat(n - 1))]
            if it == "i64":
                index.append(f"  %mi = zext <{w} x i32> %m to <{w} x i64>")
            ix = "%m" if it == "i32" else "%mi"
            lo = _const_vector(values[:half], ftype)
            hi = _const_vector(values[half:], ftype)
            return "\n".join(index + [
                f"  %r = call {vt} @llvm.x86.avx512.vpermi2var.{p}.512({lo}, "
                f"<{w} x {it}> {ix}, {hi})", f"  ret {vt} %r"])
        lines = [f"  %m = and <{w} x i32> %x, {splat(half - 1)}"]
        low, low_out = _gather(w, values[:half], ftype, "a", "%m")
        lines += low
        if half == n:
            return "\n".join(lines) + f"\n  ret {vt} {low_out}"
        high, high_out = _gather(w, values[half:], ftype, "b", "%m")
        return "\n".join(lines + high + [
            f"  %h = and <{w} x i32> %x, {splat(half)}",
            f"  %c = icmp ne <{w} x i32> %h, zeroinitializer",
            f"  %s = select <{w} x i1> %c, {vt} {high_out}, {vt} {low_out}",
            f"  ret {vt} %s"])
    text = _module_text(name, ftype, ["i32"], widths, scalar, vector, declarations)
    return _scalar_intrinsic(name, text, [types.int32], nbtype, [ir.IntType(32)], lltype())


def _x86_op(op, dtype, arity=1, imm=None):
    """An AVX-512 instruction with a masked LLVM intrinsic (vgetexp, vgetmant: arity 1, `imm`
    getmant's normalization interval and sign control; vscalef: arity 2) as a scalar function
    (the ss/sd form, whose first operand fills the upper lanes) with vector versions."""
    ftype, p, s, lltype, nbtype, widths = _FLOAT[np.dtype(dtype).type]
    name = f"{PREFIX}{op}_{p}" + ("" if imm is None else f"_{imm}")
    lanes128 = 4 if ftype == "float" else 2
    v128 = f"<{lanes128} x {ftype}>"
    imm_arg, imm_type = ("", "") if imm is None else (f"i32 {imm}, ", "i32, ")
    intrinsic = f"llvm.x86.avx512.mask.{op}"

    def packed(w):
        vt, bits = f"<{w} x {ftype}>", w * (32 if ftype == "float" else 64)
        return vt, f"{intrinsic}.{p}.{bits}", bits == 512  # (512 bits: a rounding operand)

    decls = [f"declare {v128} @{intrinsic}.{s}({v128}, {v128}, {imm_type}{v128}, i8, i32)"]
    for w in widths:
        vt, fn, rounded = packed(w)
        decls.append(f"declare {vt} @{fn}({', '.join([vt] * arity)}, {imm_type}{vt}, "
                     f"{_MASK_TYPE[w]}{', i32' if rounded else ''})")
    second = "%v" if arity == 1 else "%e"
    scalar = (f"  %v = insertelement {v128} poison, {ftype} %x, i32 0\n"
              + (f"  %e = insertelement {v128} poison, {ftype} %y, i32 0\n" if arity == 2
                 else "")
              + f"  %r = call {v128} @{intrinsic}.{s}({v128} %v, {v128} {second}, {imm_arg}"
              f"{v128} zeroinitializer, i8 -1, i32 4)\n"
              f"  %o = extractelement {v128} %r, i32 0\n  ret {ftype} %o")

    def vector(w):
        vt, fn, rounded = packed(w)
        operands = ", ".join(f"{vt} {n}" for n in ("%x", "%y")[:arity])
        return (f"  %r = call {vt} @{fn}({operands}, {imm_arg}{vt} zeroinitializer, "
                f"{_MASK_TYPE[w]} -1{', i32 4' if rounded else ''})\n  ret {vt} %r")
    # (rounding operand 4: the current rounding mode)
    text = _module_text(name, ftype, [ftype] * arity, widths, scalar, vector, decls)
    return _scalar_intrinsic(name, text, [nbtype] * arity, nbtype, [lltype()] * arity,
                             lltype())


def _range_op(dtype, imm):
    """vrange (AVX-512DQ) with immediate `imm` as a scalar function with vector versions:
    imm 5 is IEEE 754-2019 maximum of numbers (+0.0 above -0.0), 4 minimum (-0.0 below
    +0.0). With a quiet NaN it returns the other operand (maxNum's rule), so callers handle
    NaN themselves (runtime.fmax_f32). The scalar version runs the 128-bit one on lane 0."""
    ftype, p, _, lltype, nbtype, widths = _FLOAT[np.dtype(dtype).type]
    name = f"{PREFIX}range{imm}_{p}"
    lanes128 = 4 if ftype == "float" else 2
    v128 = f"<{lanes128} x {ftype}>"

    def intrinsic(w):
        bits = w * (32 if ftype == "float" else 64)
        return f"llvm.x86.avx512.mask.range.{p}.{bits}", bits == 512  # (512: rounding operand)

    decls = []
    for w in sorted(set(widths) | {lanes128}):
        fn, rounded = intrinsic(w)
        vt = f"<{w} x {ftype}>"
        decls.append(f"declare {vt} @{fn}({vt}, {vt}, i32, {vt}, {_MASK_TYPE[w]}"
                     f"{', i32' if rounded else ''})")
    fn128, _ = intrinsic(lanes128)
    scalar = (f"  %a = insertelement {v128} poison, {ftype} %x, i32 0\n"
              f"  %b = insertelement {v128} poison, {ftype} %y, i32 0\n"
              f"  %r = call {v128} @{fn128}({v128} %a, {v128} %b, i32 {imm}, {v128} "
              f"zeroinitializer, i8 -1)\n"
              f"  %o = extractelement {v128} %r, i32 0\n  ret {ftype} %o")

    def vector(w):
        fn, rounded = intrinsic(w)
        vt = f"<{w} x {ftype}>"
        return (f"  %r = call {vt} @{fn}({vt} %x, {vt} %y, i32 {imm}, {vt} zeroinitializer, "
                f"{_MASK_TYPE[w]} -1{', i32 4' if rounded else ''})\n  ret {vt} %r")
    text = _module_text(name, ftype, [ftype, ftype], widths, scalar, vector, decls)
    return _scalar_intrinsic(name, text, [nbtype] * 2, nbtype, [lltype()] * 2, lltype())


def available_dq() -> bool:
    """available() and AVX-512DQ (vrange)."""
    from .vecmath_core import target_features
    return available() and "+avx512dq" in target_features().split(",")


# range_max(a, b), range_min(a, b): the maximum/minimum of two numbers, signed zeros ordered
range_max_f32, range_min_f32 = _range_op(np.float32, 5), _range_op(np.float32, 4)
range_max_f64, range_min_f64 = _range_op(np.float64, 5), _range_op(np.float64, 4)


# getmant's immediate: bits 1:0 the interval (0: [1, 2), 2: [1/2, 1), 3: [3/4, 3/2)), bits
# 3:2 the sign (0: x's)
_MANT_1, _MANT_HALF, _MANT_3_4 = 0, 2, 3

# getexp(x): floor(log2|x|) as a float, subnormals included (-inf for 0, inf for inf, NaN for
# NaN); getmant(x): |x| 2^-e in [3/4, 3/2) with x's sign, where e is getexp(x) or one more;
# getmant1(x): |x| 2^-getexp(x), in [1, 2)
getexp_f32, getexp_f64 = _x86_op("getexp", np.float32), _x86_op("getexp", np.float64)
getmant_f32 = _x86_op("getmant", np.float32, imm=_MANT_3_4)
getmant_f64 = _x86_op("getmant", np.float64, imm=_MANT_3_4)
getmant1_f32 = _x86_op("getmant", np.float32, imm=_MANT_1)
getmant1_f64 = _x86_op("getmant", np.float64, imm=_MANT_1)
# getmant_half(x): |x| 2^-(getexp(x) + 1), in [1/2, 1)
getmant_half_f32 = _x86_op("getmant", np.float32, imm=_MANT_HALF)
# getmant_or_nan(x): getmant(x) for x >= +0 (and +inf: 1), NaN for a set sign bit (sign
# control 2: negative numbers, -0.0 and -inf), so a log needs no test of its own for them
_SIGN_NAN = 2 << 2
getmant_or_nan_f32 = _x86_op("getmant", np.float32, imm=_MANT_3_4 | _SIGN_NAN)
getmant_or_nan_f64 = _x86_op("getmant", np.float64, imm=_MANT_3_4 | _SIGN_NAN)
# scalef(x, e): x 2^floor(e) for a float e (no conversion to an integer, which `ldexp` needs:
# that conversion cost log1p 40% of its time)
scalef_f32 = _x86_op("scalef", np.float32, arity=2)
scalef_f64 = _x86_op("scalef", np.float64, arity=2)
