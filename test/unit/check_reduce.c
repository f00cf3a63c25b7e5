/*
 * test/unit/check_reduce.c - unit tests for the reduction kernels
 * (src/base/reduce.c) and the CUDA host API (src/cuda.c).
 *
 * Results are compared bit for bit with references written here, apart
 * from the kernels: integers through 64-bit arithmetic (INT128 through two
 * 64-bit words), FP16/BF16/FP32 through double arithmetic and ldexp/rint
 * based conversions (one rounding of a double that holds the exact float
 * sum/product/quotient equals the float operation), NaN/-0.0 rules with
 * isnan/signbit. Every ISA the CPU supports is forced in turn.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#endif

#include "src/base/cold.h"
#include "src/base/gpu.h"
#include "src/base/reduce.h"
#include "src/base/util.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const HcclDataType all_types[] = {
    HCCL_DATA_TYPE_INT8,   HCCL_DATA_TYPE_INT16,  HCCL_DATA_TYPE_INT32, HCCL_DATA_TYPE_FP16,
    HCCL_DATA_TYPE_FP32,   HCCL_DATA_TYPE_INT64,  HCCL_DATA_TYPE_UINT64, HCCL_DATA_TYPE_UINT8,
    HCCL_DATA_TYPE_UINT16, HCCL_DATA_TYPE_UINT32, HCCL_DATA_TYPE_FP64,  HCCL_DATA_TYPE_BFP16,
    HCCL_DATA_TYPE_INT128,
};
static const HcclReduceOp all_ops[] = {HCCL_REDUCE_SUM, HCCL_REDUCE_PROD, HCCL_REDUCE_MAX,
                                       HCCL_REDUCE_MIN, HCCL_REDUCE_AVG};
static const size_t sizes[] = {0, 1, 7, 15, 16, 17, 31, 33, 63, 65, 1000, 4099};
static const char *const isas[] = {"scalar", "avx2", "avx512"};

/* ------------------------------------------------------------ helpers */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
    uint64_t x = rng_state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng_state = x;
    return x * 0x2545f4914f6cdd1dull;
}

static int is_fp(HcclDataType t)
{
    return t == HCCL_DATA_TYPE_FP16 || t == HCCL_DATA_TYPE_BFP16 || t == HCCL_DATA_TYPE_FP32 ||
           t == HCCL_DATA_TYPE_FP64;
}

/* The support matrix, as API.md states it. */
static int supported(HcclDataType t, HcclReduceOp op)
{
    if (t == HCCL_DATA_TYPE_INT128)
        return op == HCCL_REDUCE_SUM || op == HCCL_REDUCE_MAX || op == HCCL_REDUCE_MIN;
    return op != HCCL_REDUCE_AVG || is_fp(t);
}

static size_t tsize(HcclDataType t)
{
    switch (t) {
    case HCCL_DATA_TYPE_INT8: case HCCL_DATA_TYPE_UINT8: return 1;
    case HCCL_DATA_TYPE_INT16: case HCCL_DATA_TYPE_UINT16:
    case HCCL_DATA_TYPE_FP16: case HCCL_DATA_TYPE_BFP16: return 2;
    case HCCL_DATA_TYPE_INT32: case HCCL_DATA_TYPE_UINT32: case HCCL_DATA_TYPE_FP32: return 4;
    case HCCL_DATA_TYPE_INT64: case HCCL_DATA_TYPE_UINT64: case HCCL_DATA_TYPE_FP64: return 8;
    case HCCL_DATA_TYPE_INT128: return 16;
    default: return 0;
    }
}

static int isa_usable(const char *isa)
{
    return hc_reduce_set_isa(isa) == 0;
}

static uint32_t fbits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float ffrom(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static uint64_t dbits(double f) { uint64_t u; memcpy(&u, &f, 8); return u; }
static double dfrom(uint64_t u) { double f; memcpy(&f, &u, 8); return f; }

static void hexdump(char *out, size_t cap, const void *p, size_t n)
{
    const unsigned char *c = p;
    size_t k = 0;
    out[0] = 0;
    for (size_t i = n; i-- > 0 && k + 3 < cap;) /* most significant first */
        k += (size_t)snprintf(out + k, cap - k, "%02x", c[i]);
}

/* ------------------------------------------------------------ references */

/* FP16/BF16 bits -> double, by the definition of the format. */
static double ref_small_to_d(uint16_t h, int mbits, int ebits)
{
    int bias = (1 << (ebits - 1)) - 1, e = (h >> mbits) & ((1 << ebits) - 1);
    int m = h & ((1 << mbits) - 1);
    double v;

    if (e == (1 << ebits) - 1)
        v = m ? NAN : INFINITY;
    else if (e == 0)
        v = ldexp(m, 1 - bias - mbits);
    else
        v = ldexp((1 << mbits) + m, e - bias - mbits);
    return (h >> 15) ? -v : v;
}
static double ref_h2d(uint16_t h) { return ref_small_to_d(h, 10, 5); }
static double ref_b2d(uint16_t h) { return ref_small_to_d(h, 7, 8); }

/* A non-NaN double to FP16/BF16 bits, nearest-even, by scaling to units of
 * the quantum and rint (the default rounding mode is nearest-even). */
static uint16_t ref_round_small(double x, int mbits, int ebits)
{
    int bias = (1 << (ebits - 1)) - 1, emin = 1 - bias, emax = bias, e;
    uint16_t sign = signbit(x) ? 0x8000 : 0, inf = (uint16_t)(((1 << ebits) - 1) << mbits);
    double a = fabs(x);

    if (isinf(a))
        return sign | inf;
    if (a == 0)
        return sign;
    frexp(a, &e);
    e -= 1; /* a in [2^e, 2^(e+1)) */
    if (e < emin)
        e = emin;
    double v = rint(a / ldexp(1.0, e - mbits)) * ldexp(1.0, e - mbits);
    if (v >= ldexp(1.0, emax + 1))
        return sign | inf;
    if (v < ldexp(1.0, emin))
        return sign | (uint16_t)(v / ldexp(1.0, emin - mbits));
    frexp(v, &e);
    e -= 1;
    return sign | (uint16_t)((e + bias) << mbits) |
           (uint16_t)((uint32_t)(v / ldexp(1.0, e - mbits)) - (1u << mbits));
}
static uint16_t ref_d2h(double x) { return ref_round_small(x, 10, 5); }
static uint16_t ref_d2b(double x) { return ref_round_small(x, 7, 8); }

/* MAX/MIN rule: NaN propagates, -0.0 < +0.0. */
static double ref_minmax(double a, double b, int max)
{
    if (isnan(a) || isnan(b))
        return NAN;
    if (a > b)
        return max ? a : b;
    if (b > a)
        return max ? b : a;
    if (a == 0) {
        int neg = max ? (signbit(a) && signbit(b)) : (signbit(a) || signbit(b));
        return neg ? -0.0 : 0.0;
    }
    return a;
}

/* Float element i of buf as double (exact). */
static double ref_fload(HcclDataType t, const void *buf, size_t i)
{
    uint16_t h;
    float f;
    double d;
    switch (t) {
    case HCCL_DATA_TYPE_FP16: memcpy(&h, (const char *)buf + 2 * i, 2); return ref_h2d(h);
    case HCCL_DATA_TYPE_BFP16: memcpy(&h, (const char *)buf + 2 * i, 2); return ref_b2d(h);
    case HCCL_DATA_TYPE_FP32: memcpy(&f, (const char *)buf + 4 * i, 4); return f;
    default: memcpy(&d, (const char *)buf + 8 * i, 8); return d;
    }
}

/* Store a result computed in double: FP16/BF16/FP32 round to float first
 * (the contract: reduce in float32, then round once to the small type);
 * NaN is canonical. */
static void ref_fstore(HcclDataType t, void *buf, size_t i, double r)
{
    uint16_t h;
    uint32_t u;
    uint64_t q;
    float f = (float)r;
    switch (t) {
    case HCCL_DATA_TYPE_FP16:
        h = isnan(r) ? 0x7e00 : ref_d2h(f);
        memcpy((char *)buf + 2 * i, &h, 2);
        break;
    case HCCL_DATA_TYPE_BFP16:
        h = isnan(r) ? 0x7fc0 : ref_d2b(f);
        memcpy((char *)buf + 2 * i, &h, 2);
        break;
    case HCCL_DATA_TYPE_FP32:
        u = isnan(r) ? 0x7fc00000u : fbits(f);
        memcpy((char *)buf + 4 * i, &u, 4);
        break;
    default:
        q = isnan(r) ? 0x7ff8000000000000ull : dbits(r);
        memcpy((char *)buf + 8 * i, &q, 8);
        break;
    }
}

static void int_info(HcclDataType t, int *bytes, int *sgn)
{
    *bytes = (int)tsize(t);
    *sgn = t == HCCL_DATA_TYPE_INT8 || t == HCCL_DATA_TYPE_INT16 || t == HCCL_DATA_TYPE_INT32 ||
           t == HCCL_DATA_TYPE_INT64 || t == HCCL_DATA_TYPE_INT128;
}

static uint64_t ld_u(const void *buf, size_t i, int bytes)
{
    uint64_t v = 0;
    memcpy(&v, (const char *)buf + i * (size_t)bytes, (size_t)bytes); /* little-endian */
    return v;
}

static int64_t sext(uint64_t v, int bytes)
{
    if (bytes == 8)
        return (int64_t)v;
    uint64_t m = 1ull << (bytes * 8 - 1);
    return (int64_t)((v ^ m) - m);
}

/* INT128 as two 64-bit words (lo, hi), little-endian. */
static void ref_i128(void *d, const void *a, const void *b, HcclReduceOp op)
{
    uint64_t x[2], y[2], r[2];
    memcpy(x, a, 16);
    memcpy(y, b, 16);
    if (op == HCCL_REDUCE_SUM) {
        r[0] = x[0] + y[0];
        r[1] = x[1] + y[1] + (r[0] < x[0]);
    } else {
        int gt = (int64_t)x[1] != (int64_t)y[1] ? (int64_t)x[1] > (int64_t)y[1] : x[0] > y[0];
        int pick_x = op == HCCL_REDUCE_MAX ? gt : !gt;
        memcpy(r, pick_x ? x : y, 16);
    }
    memcpy(d, r, 16);
}

/* exp[i] = a[i] op b[i], the reference way. */
static void ref_reduce(void *exp, const void *a, const void *b, size_t n, HcclDataType t,
                       HcclReduceOp op)
{
    if (is_fp(t)) {
        for (size_t i = 0; i < n; i++) {
            double x = ref_fload(t, a, i), y = ref_fload(t, b, i), r;
            switch (op) {
            case HCCL_REDUCE_SUM: case HCCL_REDUCE_AVG: r = x + y; break;
            case HCCL_REDUCE_PROD: r = x * y; break;
            case HCCL_REDUCE_MAX: r = ref_minmax(x, y, 1); break;
            default: r = ref_minmax(x, y, 0); break;
            }
            ref_fstore(t, exp, i, r);
        }
        return;
    }
    if (t == HCCL_DATA_TYPE_INT128) {
        for (size_t i = 0; i < n; i++)
            ref_i128((char *)exp + 16 * i, (const char *)a + 16 * i, (const char *)b + 16 * i, op);
        return;
    }
    int bytes, sgn;
    int_info(t, &bytes, &sgn);
    for (size_t i = 0; i < n; i++) {
        uint64_t x = ld_u(a, i, bytes), y = ld_u(b, i, bytes), r;
        int gt = sgn ? sext(x, bytes) > sext(y, bytes) : x > y;
        switch (op) {
        case HCCL_REDUCE_SUM: r = x + y; break;
        case HCCL_REDUCE_PROD: r = x * y; break;
        case HCCL_REDUCE_MAX: r = gt ? x : y; break;
        default: r = gt ? y : x; break;
        }
        memcpy((char *)exp + i * (size_t)bytes, &r, (size_t)bytes);
    }
}

/* ------------------------------------------------------------ test data */

static void fill_fp32_elem(void *p)
{
    uint32_t u;
    switch (rnd() % 16) {
    case 0: u = (uint32_t)rnd(); break;                                    /* anything */
    case 1: u = (uint32_t)(rnd() & 0x807fffffu); break;                    /* subnormal/0 */
    case 2: u = 0x7f800000u | (uint32_t)(rnd() & 0x807fffffu); break;      /* inf/NaN */
    case 3: u = (rnd() & 1) ? 0x80000000u : 0; break;                      /* +-0 */
    case 4: u = 0x7f7fffffu | (uint32_t)(rnd() & 0x80000000u); break;      /* +-max */
    default: /* moderate: exponent 2^-20..2^20, random mantissa and sign */
        u = (uint32_t)(rnd() & 0x807fffffu) | (uint32_t)(107 + rnd() % 41) << 23;
        break;
    }
    memcpy(p, &u, 4);
}

static void fill_fp64_elem(void *p)
{
    uint64_t u;
    switch (rnd() % 16) {
    case 0: u = rnd(); break;
    case 1: u = rnd() & 0x800fffffffffffffull; break;
    case 2: u = 0x7ff0000000000000ull | (rnd() & 0x800fffffffffffffull); break;
    case 3: u = (rnd() & 1) ? 0x8000000000000000ull : 0; break;
    case 4: u = 0x7fefffffffffffffull | (rnd() & 0x8000000000000000ull); break;
    default: u = (rnd() & 0x800fffffffffffffull) | (uint64_t)(1003 + rnd() % 41) << 52; break;
    }
    memcpy(p, &u, 8);
}

static void fill_int_elem(void *p, size_t es)
{
    unsigned char b[16];
    uint64_t r = rnd(), r2 = rnd();
    memcpy(b, &r, 8);
    memcpy(b + 8, &r2, 8);
    switch (rnd() % 8) {
    case 0: memset(b, 0, 16); break;                               /* 0 */
    case 1: memset(b, 0xff, 16); break;                            /* -1 / max unsigned */
    case 2: memset(b, 0xff, 16); b[es - 1] = 0x7f; break;          /* signed max */
    case 3: memset(b, 0, 16); b[es - 1] = 0x80; break;             /* signed min */
    default: break;
    }
    memcpy(p, b, es);
}

/* a and b, with some lanes equal or negated (cancellation, +-0, ties). */
static void fill_pair(void *a, void *b, size_t n, HcclDataType t)
{
    size_t es = tsize(t);
    for (size_t i = 0; i < n; i++) {
        char *pa = (char *)a + i * es, *pb = (char *)b + i * es;
        for (int k = 0; k < 2; k++) {
            char *p = k ? pb : pa;
            if (t == HCCL_DATA_TYPE_FP16 || t == HCCL_DATA_TYPE_BFP16) {
                uint16_t h = (uint16_t)rnd();
                memcpy(p, &h, 2);
            } else if (t == HCCL_DATA_TYPE_FP32) {
                fill_fp32_elem(p);
            } else if (t == HCCL_DATA_TYPE_FP64) {
                fill_fp64_elem(p);
            } else {
                fill_int_elem(p, es);
            }
        }
        unsigned c = (unsigned)(rnd() % 16);
        if (c == 0) {
            memcpy(pb, pa, es);
        } else if (c == 1 && is_fp(t)) {
            memcpy(pb, pa, es);
            pb[es - 1] ^= (char)0x80; /* negate */
        }
    }
}

/* ------------------------------------------------------------ basics */

START_TEST(test_names)
{
    static const struct { HcclDataType t; size_t size; const char *name; int fl; } tab[] = {
        {HCCL_DATA_TYPE_INT8, 1, "int8", 0},       {HCCL_DATA_TYPE_INT16, 2, "int16", 0},
        {HCCL_DATA_TYPE_INT32, 4, "int32", 0},     {HCCL_DATA_TYPE_FP16, 2, "float16", 1},
        {HCCL_DATA_TYPE_FP32, 4, "float32", 1},    {HCCL_DATA_TYPE_INT64, 8, "int64", 0},
        {HCCL_DATA_TYPE_UINT64, 8, "uint64", 0},   {HCCL_DATA_TYPE_UINT8, 1, "uint8", 0},
        {HCCL_DATA_TYPE_UINT16, 2, "uint16", 0},   {HCCL_DATA_TYPE_UINT32, 4, "uint32", 0},
        {HCCL_DATA_TYPE_FP64, 8, "float64", 1},    {HCCL_DATA_TYPE_BFP16, 2, "bfloat16", 1},
        {HCCL_DATA_TYPE_INT128, 16, "int128", 0},  {HCCL_DATA_TYPE_FP8E4M3, 1, "fp8e4m3", 0},
        {HCCL_DATA_TYPE_FP8E5M2, 1, "fp8e5m2", 0}, {(HcclDataType)13, 0, "unknown", 0},
        {HCCL_DATA_TYPE_HIF8, 1, "hif8", 0},       {HCCL_DATA_TYPE_FP8E8M0, 1, "fp8e8m0", 0},
        {(HcclDataType)18, 0, "unknown", 0},
        {HCCL_DATA_TYPE_RESERVED, 0, "unknown", 0},
    };
    for (size_t i = 0; i < NELEM(tab); i++) {
        ck_assert_uint_eq(hc_dtype_size(tab[i].t), tab[i].size);
        ck_assert_str_eq(hc_dtype_name(tab[i].t), tab[i].name);
        ck_assert_int_eq(hc_dtype_is_float(tab[i].t), tab[i].fl);
    }
    ck_assert_str_eq(hc_op_name(HCCL_REDUCE_SUM), "sum");
    ck_assert_str_eq(hc_op_name(HCCL_REDUCE_PROD), "prod");
    ck_assert_str_eq(hc_op_name(HCCL_REDUCE_MAX), "max");
    ck_assert_str_eq(hc_op_name(HCCL_REDUCE_MIN), "min");
    ck_assert_str_eq(hc_op_name(HCCL_REDUCE_AVG), "avg");
    ck_assert_str_eq(hc_op_name((HcclReduceOp)5), "unknown");
    ck_assert_str_eq(hc_op_name(HCCL_REDUCE_RESERVED), "unknown");
}
END_TEST

START_TEST(test_check_codes)
{
    static const int types[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 100, 255};
    static const int ops[] = {0, 1, 2, 3, 4, 5, 6, 100, 255};
    for (size_t i = 0; i < NELEM(types); i++) {
        for (size_t j = 0; j < NELEM(ops); j++) {
            int t = types[i], op = ops[j], want;
            int fp8 = t >= 14 && t <= 17; /* HIF8, FP8E4M3, FP8E5M2, FP8E8M0: move only */
            if ((t > 12 && !fp8) || op > 4)
                want = HCCL_E_PARA;
            else if (fp8)
                want = HCCL_E_NOT_SUPPORT;
            else
                want = supported((HcclDataType)t, (HcclReduceOp)op) ? HCCL_SUCCESS
                                                                    : HCCL_E_NOT_SUPPORT;
            ck_assert_msg(hc_reduce_check((HcclDataType)t, (HcclReduceOp)op) == want,
                          "hc_reduce_check(%d, %d) = %d, want %d", t, op,
                          hc_reduce_check((HcclDataType)t, (HcclReduceOp)op), want);
        }
    }
}
END_TEST

START_TEST(test_isa_select)
{
    ck_assert_int_eq(hc_reduce_set_isa(NULL), -1);
    ck_assert_int_eq(hc_reduce_set_isa("bogus"), -1);
    ck_assert_int_eq(hc_reduce_set_isa("scalar"), 0);
    ck_assert_str_eq(hc_reduce_isa(), "scalar");
#if defined(__x86_64__) && defined(__GNUC__)
    unsigned ea, eb, ec, ed;
    int f16c = __get_cpuid(1, &ea, &eb, &ec, &ed) && (ec & bit_F16C);
    __builtin_cpu_init();
    int avx2 = __builtin_cpu_supports("avx2") && f16c;
    int avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                 __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
    ck_assert_int_eq(hc_reduce_set_isa("avx2"), avx2 ? 0 : -1);
    ck_assert_int_eq(hc_reduce_set_isa("avx512"), avx512 ? 0 : -1);
    ck_assert_int_eq(hc_reduce_set_isa("auto"), 0);
    ck_assert_str_eq(hc_reduce_isa(), avx512 ? "avx512" : avx2 ? "avx2" : "scalar");
    printf("check_reduce: CPU kernels available: scalar%s%s\n", avx2 ? " avx2" : "",
           avx512 ? " avx512" : "");
#else
    ck_assert_int_eq(hc_reduce_set_isa("auto"), 0);
#endif
}
END_TEST

/* ------------------------------------------------------------ vs reference */

/* Modes: 0 separate dst, 1 dst == a, 2 dst == b, 3 all pointers offset by
 * one element, 4 all pointers offset by one byte (no alignment at all). */
static void check_vs_ref(HcclDataType t, HcclReduceOp op, size_t n, int mode, const char *isa)
{
    size_t es = tsize(t), bytes = n * es, pad = 2 * es + 1;
    char *ba = malloc(bytes + pad), *bb = malloc(bytes + pad), *bd = malloc(bytes + pad);
    char *exp = malloc(bytes + 1), *a0 = malloc(bytes + 1), *b0 = malloc(bytes + 1);
    size_t off = mode == 3 ? es : mode == 4 ? 1 : 0;
    char *a = ba + off, *b = bb + off, *d = bd + off;

    ck_assert(ba && bb && bd && exp && a0 && b0);
    fill_pair(a0, b0, n, t);
    memcpy(a, a0, bytes);
    memcpy(b, b0, bytes);
    memset(bd, 0xa5, bytes + pad);
    ref_reduce(exp, a0, b0, n, t, op);
    char *dst = mode == 1 ? a : mode == 2 ? b : d;
    hc_reduce(dst, a, b, n, t, op);

    for (size_t i = 0; i < n; i++) {
        if (memcmp(dst + i * es, exp + i * es, es) != 0) {
            char ha[40], hb[40], hg[40], he[40];
            hexdump(ha, sizeof ha, a0 + i * es, es);
            hexdump(hb, sizeof hb, b0 + i * es, es);
            hexdump(hg, sizeof hg, dst + i * es, es);
            hexdump(he, sizeof he, exp + i * es, es);
            ck_abort_msg("%s %s %s n=%zu mode=%d: [%zu] %s op %s = %s, want %s", isa,
                         hc_dtype_name(t), hc_op_name(op), n, mode, i, ha, hb, hg, he);
        }
    }
    /* inputs untouched unless they are dst; nothing written past the end */
    if (mode != 1)
        ck_assert_msg(memcmp(a, a0, bytes) == 0, "%s %s: a modified", isa, hc_dtype_name(t));
    if (mode != 2)
        ck_assert_msg(memcmp(b, b0, bytes) == 0, "%s %s: b modified", isa, hc_dtype_name(t));
    for (size_t i = 0; i < pad - off && mode != 1 && mode != 2; i++)
        ck_assert_msg((unsigned char)d[bytes + i] == 0xa5, "%s %s %s n=%zu: wrote past the end",
                      isa, hc_dtype_name(t), hc_op_name(op), n);
    free(ba), free(bb), free(bd), free(exp), free(a0), free(b0);
}

START_TEST(test_reduce_vs_ref)
{
    const char *isa = isas[_i];
    if (!isa_usable(isa)) {
        printf("check_reduce: %s not supported by this CPU, skipped\n", isa);
        return;
    }
    rng_state = 0x1234567 + (uint64_t)_i;
    for (size_t ti = 0; ti < NELEM(all_types); ti++)
        for (size_t oi = 0; oi < NELEM(all_ops); oi++) {
            if (!supported(all_types[ti], all_ops[oi]))
                continue;
            for (size_t si = 0; si < NELEM(sizes); si++)
                for (int mode = 0; mode < 5; mode++)
                    check_vs_ref(all_types[ti], all_ops[oi], sizes[si], mode, isa);
        }
}
END_TEST

/* An unsupported combination leaves dst alone. */
START_TEST(test_unsupported_noop)
{
    unsigned char a[64], b[64], d[64];
    memset(a, 1, sizeof a), memset(b, 2, sizeof b), memset(d, 0x5a, sizeof d);
    hc_reduce(d, a, b, 4, HCCL_DATA_TYPE_INT128, HCCL_REDUCE_PROD);
    hc_reduce(d, a, b, 4, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_AVG);
    hc_reduce(d, a, b, 4, HCCL_DATA_TYPE_FP8E4M3, HCCL_REDUCE_SUM);
    hc_reduce(d, a, b, 4, (HcclDataType)13, HCCL_REDUCE_SUM);
    hc_reduce(d, a, b, 4, HCCL_DATA_TYPE_FP32, (HcclReduceOp)5);
    hc_reduce(d, a, b, 4, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_RESERVED);
    const void *src[2] = {a, b};
    hc_reduce_multi(d, src, 2, 4, HCCL_DATA_TYPE_INT128, HCCL_REDUCE_PROD);
    hc_reduce_scale(d, 4, HCCL_DATA_TYPE_INT32, 3);
    hc_reduce_scale(d, 4, HCCL_DATA_TYPE_RESERVED, 3);
    for (size_t i = 0; i < sizeof d; i++)
        ck_assert_uint_eq(d[i], 0x5a);
}
END_TEST

/* ------------------------------------------------------------ integers */

START_TEST(test_int_wrap)
{
    for (size_t k = 0; k < NELEM(isas); k++) {
        if (!isa_usable(isas[k]))
            continue;
        /* enough elements that the SIMD loop, not only the tail, sees them */
        enum { N = 200 };
        int8_t a8[N], b8[N], d8[N];
        uint8_t ua[N], ub[N], ud[N];
        int16_t a16[N], b16[N], d16[N];
        int32_t a32[N], b32[N], d32[N];
        uint32_t ua32[N], ub32[N], ud32[N];
        int64_t a64[N], b64[N], d64[N];
        uint64_t ua64[N], ub64[N], ud64[N];
        for (int i = 0; i < N; i++) {
            a8[i] = 127, b8[i] = 1, ua[i] = 255, ub[i] = 1;
            a16[i] = 300, b16[i] = 300; /* 90000 wraps to 24464 */
            a32[i] = INT32_MIN, b32[i] = -1;
            ua32[i] = 0xffffffffu, ub32[i] = 2;
            a64[i] = INT64_MAX, b64[i] = 1;
            ua64[i] = UINT64_MAX, ub64[i] = 0;
        }
        hc_reduce(d8, a8, b8, N, HCCL_DATA_TYPE_INT8, HCCL_REDUCE_SUM);
        hc_reduce(ud, ua, ub, N, HCCL_DATA_TYPE_UINT8, HCCL_REDUCE_SUM);
        hc_reduce(d16, a16, b16, N, HCCL_DATA_TYPE_INT16, HCCL_REDUCE_PROD);
        hc_reduce(d32, a32, b32, N, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_PROD);
        hc_reduce(ud32, ua32, ub32, N, HCCL_DATA_TYPE_UINT32, HCCL_REDUCE_PROD);
        hc_reduce(d64, a64, b64, N, HCCL_DATA_TYPE_INT64, HCCL_REDUCE_SUM);
        for (int i = 0; i < N; i++) {
            ck_assert_int_eq(d8[i], -128);
            ck_assert_uint_eq(ud[i], 0);
            ck_assert_int_eq(d16[i], 24464);
            ck_assert_int_eq(d32[i], INT32_MIN); /* INT32_MIN * -1 wraps to itself */
            ck_assert_uint_eq(ud32[i], 0xfffffffeu);
            ck_assert_int_eq(d64[i], INT64_MIN);
        }
        /* signed vs unsigned MAX/MIN on the same bits */
        hc_reduce(d8, a8, (int8_t[]){0}, 1, HCCL_DATA_TYPE_INT8, HCCL_REDUCE_MAX);
        ck_assert_int_eq(d8[0], 127);
        int8_t m1[N];
        uint8_t um1[N];
        memset(m1, 0xff, sizeof m1);
        memset(um1, 0xff, sizeof um1);
        hc_reduce(d8, m1, a8, N, HCCL_DATA_TYPE_INT8, HCCL_REDUCE_MAX);
        hc_reduce(ud, um1, ub, N, HCCL_DATA_TYPE_UINT8, HCCL_REDUCE_MAX);
        hc_reduce(d64, a64, (int64_t[N]){0}, N, HCCL_DATA_TYPE_INT64, HCCL_REDUCE_MIN);
        hc_reduce(ud64, ua64, ub64, N, HCCL_DATA_TYPE_UINT64, HCCL_REDUCE_MIN);
        for (int i = 0; i < N; i++) {
            ck_assert_int_eq(d8[i], 127);
            ck_assert_uint_eq(ud[i], 255);
            ck_assert_int_eq(d64[i], 0);
            ck_assert_uint_eq(ud64[i], 0);
        }
    }
}
END_TEST

START_TEST(test_int128)
{
    __extension__ typedef __int128 i128;
    __extension__ typedef unsigned __int128 u128;
    const u128 two64 = (u128)1 << 64;
    i128 a[5], b[5], d[5];
    a[0] = (i128)(two64 + 5), b[0] = (i128)(two64 - 1);          /* carry across words */
    a[1] = -(i128)two64 * 3, b[1] = (i128)two64 + 7;               /* negative, beyond 64 bits */
    a[2] = (i128)(((u128)1 << 127) - 1), b[2] = 1;                 /* max + 1 wraps to min */
    a[3] = -1, b[3] = -1;
    a[4] = (i128)two64, b[4] = (i128)(two64 - 1);                  /* max/min by the high word */

    hc_reduce(d, a, b, 5, HCCL_DATA_TYPE_INT128, HCCL_REDUCE_SUM);
    ck_assert(d[0] == (i128)(2 * two64 + 4));
    ck_assert(d[1] == -(i128)two64 * 2 + 7);
    ck_assert(d[2] == (i128)((u128)1 << 127)); /* INT128_MIN */
    ck_assert(d[3] == -2);
    hc_reduce(d, a, b, 5, HCCL_DATA_TYPE_INT128, HCCL_REDUCE_MAX);
    ck_assert(d[1] == (i128)two64 + 7);
    ck_assert(d[2] == a[2]);
    ck_assert(d[4] == (i128)two64);
    hc_reduce(d, a, b, 5, HCCL_DATA_TYPE_INT128, HCCL_REDUCE_MIN);
    ck_assert(d[1] == -(i128)two64 * 3);
    ck_assert(d[4] == (i128)(two64 - 1));
    /* in place */
    hc_reduce(a, a, b, 5, HCCL_DATA_TYPE_INT128, HCCL_REDUCE_SUM);
    ck_assert(a[0] == (i128)(2 * two64 + 4));
}
END_TEST

/* ------------------------------------------------------------ FP16 / BF16 */

/* Conversions, all 65536 patterns: exact widening, identity back for
 * non-NaN, NaN quieted with sign and payload kept. */
START_TEST(test_conv_exhaustive)
{
    for (uint32_t h = 0; h < 65536; h++) {
        uint16_t x = (uint16_t)h;
        uint32_t m = x & 0x3ffu;
        float f = hc_fp16_to_float(x);
        if ((x & 0x7c00u) == 0x7c00u && m) {
            uint32_t want = ((uint32_t)(x >> 15) << 31) | 0x7fc00000u | (m << 13);
            ck_assert_msg(fbits(f) == want, "fp16 %04x -> %08x, want %08x", h, fbits(f), want);
            ck_assert_uint_eq(hc_float_to_fp16(f), x | 0x200u);
        } else {
            double r = ref_h2d(x);
            ck_assert_msg((double)f == r && !signbit(f) == !signbit(r), "fp16 %04x -> %a, want %a",
                          h, (double)f, r);
            ck_assert_msg(hc_float_to_fp16(f) == x, "fp16 %04x round trip -> %04x", h,
                          hc_float_to_fp16(f));
            ck_assert_uint_eq(fbits(hc_fp16_to_float(hc_float_to_fp16(f))), fbits(f));
        }

        m = x & 0x7fu;
        f = hc_bf16_to_float(x);
        if ((x & 0x7f80u) == 0x7f80u && m) {
            uint32_t want = ((uint32_t)x << 16) | 0x400000u;
            ck_assert_msg(fbits(f) == want, "bf16 %04x -> %08x, want %08x", h, fbits(f), want);
            ck_assert_uint_eq(hc_float_to_bf16(f), x | 0x40u);
        } else {
            double r = ref_b2d(x);
            ck_assert_msg((double)f == r && !signbit(f) == !signbit(r), "bf16 %04x -> %a, want %a",
                          h, (double)f, r);
            ck_assert_msg(hc_float_to_bf16(f) == x, "bf16 %04x round trip -> %04x", h,
                          hc_float_to_bf16(f));
        }
    }
}
END_TEST

static void check_f2small(uint32_t u)
{
    float f = ffrom(u);
    if (isnan(f)) {
        uint16_t h = hc_float_to_fp16(f), b = hc_float_to_bf16(f);
        ck_assert_msg((h & 0x7e00u) == 0x7e00u && (h >> 15) == (u >> 31), "fp16 of NaN %08x: %04x", u, h);
        ck_assert_msg((b & 0x7fc0u) == 0x7fc0u && (b >> 15) == (u >> 31), "bf16 of NaN %08x: %04x", u, b);
        return;
    }
    ck_assert_msg(hc_float_to_fp16(f) == ref_d2h(f), "fp16 of %08x (%a): %04x, want %04x", u,
                  (double)f, hc_float_to_fp16(f), ref_d2h(f));
    ck_assert_msg(hc_float_to_bf16(f) == ref_d2b(f), "bf16 of %08x (%a): %04x, want %04x", u,
                  (double)f, hc_float_to_bf16(f), ref_d2b(f));
}

/* Float -> FP16/BF16 rounding: every tie and its neighbours, a stride over
 * all floats, and random patterns. */
START_TEST(test_conv_rounding)
{
    for (uint32_t h = 0; h < 0x7c00u; h++) { /* finite fp16, both signs */
        for (uint32_t s = 0; s <= 0x8000u; s += 0x8000u) {
            uint32_t u = fbits(hc_fp16_to_float((uint16_t)(h | s)));
            if (h >= 0x400u) { /* normal: the tie is half a unit (bit 12) above */
                check_f2small(u + 0x1000u);
                check_f2small(u + 0x0fffu);
                check_f2small(u + 0x1001u);
            }
            check_f2small(u);
        }
    }
    for (uint32_t h = 0; h < 0x7f80u; h++)
        for (uint32_t s = 0; s <= 0x8000u; s += 0x8000u) {
            uint32_t u = (h | s) << 16;
            check_f2small(u + 0x8000u);
            check_f2small(u + 0x7fffu);
            check_f2small(u + 0x8001u);
        }
    for (uint64_t u = 0; u <= 0xffffffffull; u += 65521)
        check_f2small((uint32_t)u);
    rng_state = 42;
    for (int i = 0; i < 300000; i++)
        check_f2small((uint32_t)rnd());
}
END_TEST

static uint16_t red16(HcclDataType t, HcclReduceOp op, uint16_t a, uint16_t b)
{
    /* 70 lanes: SIMD body and scalar tail both see the value */
    uint16_t va[70], vb[70], vd[70];
    for (int i = 0; i < 70; i++)
        va[i] = a, vb[i] = b;
    hc_reduce(vd, va, vb, 70, t, op);
    for (int i = 1; i < 70; i++)
        ck_assert_uint_eq(vd[i], vd[0]);
    return vd[0];
}

START_TEST(test_half_rounding)
{
    static const struct { uint16_t x; float f; } h2f_cases[] = {
        {0x3c00, 1.0f}, {0xc000, -2.0f}, {0x7bff, 65504.0f}, {0x0001, 0x1p-24f},
        {0x03ff, 0x3ffp-24f}, {0x0400, 0x1p-14f}, {0x8000, -0.0f}, {0x3555, 0x555p-12f},
    };
    for (size_t i = 0; i < NELEM(h2f_cases); i++)
        ck_assert_uint_eq(fbits(hc_fp16_to_float(h2f_cases[i].x)), fbits(h2f_cases[i].f));
    static const struct { float f; uint16_t h, b; } f2s[] = {
        {1.0f, 0x3c00, 0x3f80},
        {1.0f + 0x1p-11f, 0x3c00, 0x3f80},                 /* fp16 tie -> even */
        {1.0f + 0x3p-11f, 0x3c02, 0x3f80},                 /* fp16 tie -> even (up) */
        {1.0f + 0x1p-8f, 0x3c04, 0x3f80},                  /* bf16 tie -> even */
        {1.0f + 0x3p-8f, 0x3c0c, 0x3f82},                  /* bf16 tie -> even (up) */
        {2.0f - 0x1p-12f, 0x4000, 0x4000},                 /* into the next binade */
        {65504.0f, 0x7bff, 0x4780},
        {65519.0f, 0x7bff, 0x4780},                        /* below the tie: max */
        {65520.0f, 0x7c00, 0x4780},                        /* tie with 65536: inf */
        {0x1.fffffep127f, 0x7c00, 0x7f80},                 /* bf16 overflow to inf */
        {0x1.fefffep127f, 0x7c00, 0x7f7f},
        {0x1p-24f, 0x0001, 0x3380},                        /* fp16 min subnormal */
        {0x1p-25f, 0x0000, 0x3300},                        /* tie -> 0 */
        {0x1.8p-24f, 0x0002, 0x33c0},                      /* 1.5 units -> 2 */
        {0x1.000002p-25f, 0x0001, 0x3300},                 /* just above the tie */
        {0x1p-14f - 0x1p-25f, 0x0400, 0x3880},             /* subnormal rounds to min normal */
        {0x1p-149f, 0x0000, 0x0000},                       /* float subnormal */
        {0x1p-133f, 0x0000, 0x0001},                       /* bf16 min subnormal */
        {0x1p-134f, 0x0000, 0x0000},                       /* bf16 tie -> 0 */
        {0x3p-134f, 0x0000, 0x0002},                       /* bf16 1.5 units -> 2 */
        {-0.0f, 0x8000, 0x8000},
        {-0x1p-30f, 0x8000, 0xb080},                       /* fp16 underflow keeps the sign */
        {INFINITY, 0x7c00, 0x7f80},
        {-INFINITY, 0xfc00, 0xff80},
    };
    for (size_t i = 0; i < NELEM(f2s); i++) {
        ck_assert_msg(hc_float_to_fp16(f2s[i].f) == f2s[i].h, "fp16(%a) = %04x, want %04x",
                      (double)f2s[i].f, hc_float_to_fp16(f2s[i].f), f2s[i].h);
        ck_assert_msg(hc_float_to_bf16(f2s[i].f) == f2s[i].b, "bf16(%a) = %04x, want %04x",
                      (double)f2s[i].f, hc_float_to_bf16(f2s[i].f), f2s[i].b);
    }
    /* NaN stays NaN, quiet */
    ck_assert_uint_eq(hc_float_to_fp16(ffrom(0x7f800001u)), 0x7e00);
    ck_assert_uint_eq(hc_float_to_fp16(ffrom(0xffc02000u)), 0xfe01);
    ck_assert_uint_eq(hc_float_to_bf16(ffrom(0x7f800001u)), 0x7fc0);
    ck_assert_uint_eq(hc_float_to_bf16(ffrom(0xff810000u)), 0xffc1);
    ck_assert(isnan(hc_fp16_to_float(0x7c01)));
    ck_assert(isnan(hc_bf16_to_float(0x7f81)));

    /* the same cases through the reductions, in every ISA */
    static const struct { HcclDataType t; HcclReduceOp op; uint16_t a, b, want; } red[] = {
        {HCCL_DATA_TYPE_FP16, HCCL_REDUCE_SUM, 0x3c00, 0x1000, 0x3c00}, /* 1 + 2^-11: tie, even */
        {HCCL_DATA_TYPE_FP16, HCCL_REDUCE_SUM, 0x3c01, 0x1000, 0x3c02}, /* tie, up to even */
        {HCCL_DATA_TYPE_FP16, HCCL_REDUCE_SUM, 0x67ff, 0x3800, 0x6800}, /* 2047.5 -> 2048 */
        {HCCL_DATA_TYPE_FP16, HCCL_REDUCE_SUM, 0x7bff, 0x4c00, 0x7c00}, /* 65504+16: inf */
        {HCCL_DATA_TYPE_FP16, HCCL_REDUCE_SUM, 0x7bff, 0x4800, 0x7bff}, /* 65504+8: 65504 */
        {HCCL_DATA_TYPE_FP16, HCCL_REDUCE_SUM, 0x0001, 0x0001, 0x0002}, /* subnormals */
        {HCCL_DATA_TYPE_FP16, HCCL_REDUCE_SUM, 0x03ff, 0x0001, 0x0400}, /* into normal */
        {HCCL_DATA_TYPE_FP16, HCCL_REDUCE_PROD, 0x0001, 0x3800, 0x0000}, /* 2^-25: tie -> 0 */
        {HCCL_DATA_TYPE_FP16, HCCL_REDUCE_PROD, 0x0003, 0x3800, 0x0002}, /* 1.5 -> 2 */
        {HCCL_DATA_TYPE_FP16, HCCL_REDUCE_PROD, 0x8001, 0x3400, 0x8000}, /* -> -0 */
        {HCCL_DATA_TYPE_FP16, HCCL_REDUCE_PROD, 0x7bff, 0x4000, 0x7c00}, /* overflow */
        {HCCL_DATA_TYPE_FP16, HCCL_REDUCE_SUM, 0x8000, 0x8000, 0x8000}, /* -0 + -0 */
        {HCCL_DATA_TYPE_FP16, HCCL_REDUCE_SUM, 0x8000, 0x0000, 0x0000}, /* -0 + +0 */
        {HCCL_DATA_TYPE_FP16, HCCL_REDUCE_SUM, 0x3c00, 0xbc00, 0x0000}, /* 1 - 1 */
        {HCCL_DATA_TYPE_FP16, HCCL_REDUCE_MAX, 0x8000, 0x0000, 0x0000},
        {HCCL_DATA_TYPE_FP16, HCCL_REDUCE_MAX, 0x0000, 0x8000, 0x0000},
        {HCCL_DATA_TYPE_FP16, HCCL_REDUCE_MIN, 0x8000, 0x0000, 0x8000},
        {HCCL_DATA_TYPE_FP16, HCCL_REDUCE_MIN, 0x0000, 0x8000, 0x8000},
        {HCCL_DATA_TYPE_FP16, HCCL_REDUCE_SUM, 0x7c01, 0x3c00, 0x7e00}, /* sNaN -> canonical */
        {HCCL_DATA_TYPE_FP16, HCCL_REDUCE_SUM, 0x7c00, 0xfc00, 0x7e00}, /* inf - inf */
        {HCCL_DATA_TYPE_FP16, HCCL_REDUCE_MAX, 0xfe55, 0x3c00, 0x7e00}, /* NaN propagates */
        {HCCL_DATA_TYPE_FP16, HCCL_REDUCE_MAX, 0x3c00, 0x7d00, 0x7e00},
        {HCCL_DATA_TYPE_FP16, HCCL_REDUCE_MIN, 0x7c00, 0x7e01, 0x7e00},
        {HCCL_DATA_TYPE_FP16, HCCL_REDUCE_MAX, 0xfc00, 0x7c00, 0x7c00},
        {HCCL_DATA_TYPE_BFP16, HCCL_REDUCE_SUM, 0x3f80, 0x3b80, 0x3f80}, /* 1 + 2^-8: tie */
        {HCCL_DATA_TYPE_BFP16, HCCL_REDUCE_SUM, 0x3f81, 0x3b80, 0x3f82},
        {HCCL_DATA_TYPE_BFP16, HCCL_REDUCE_SUM, 0x437f, 0x3f00, 0x4380}, /* 255.5 -> 256 */
        {HCCL_DATA_TYPE_BFP16, HCCL_REDUCE_SUM, 0x7f7f, 0x7f7f, 0x7f80}, /* overflow */
        {HCCL_DATA_TYPE_BFP16, HCCL_REDUCE_SUM, 0x0001, 0x0001, 0x0002}, /* subnormals */
        {HCCL_DATA_TYPE_BFP16, HCCL_REDUCE_PROD, 0x0001, 0x3f00, 0x0000}, /* tie -> 0 */
        {HCCL_DATA_TYPE_BFP16, HCCL_REDUCE_PROD, 0x0003, 0x3f00, 0x0002}, /* 1.5 -> 2 */
        {HCCL_DATA_TYPE_BFP16, HCCL_REDUCE_SUM, 0x8000, 0x8000, 0x8000},
        {HCCL_DATA_TYPE_BFP16, HCCL_REDUCE_MAX, 0x8000, 0x0000, 0x0000},
        {HCCL_DATA_TYPE_BFP16, HCCL_REDUCE_MIN, 0x0000, 0x8000, 0x8000},
        {HCCL_DATA_TYPE_BFP16, HCCL_REDUCE_SUM, 0xff81, 0x3f80, 0x7fc0},
        {HCCL_DATA_TYPE_BFP16, HCCL_REDUCE_MIN, 0x3f80, 0x7fc1, 0x7fc0},
    };
    for (size_t k = 0; k < NELEM(isas); k++) {
        if (!isa_usable(isas[k]))
            continue;
        for (size_t i = 0; i < NELEM(red); i++) {
            uint16_t got = red16(red[i].t, red[i].op, red[i].a, red[i].b);
            ck_assert_msg(got == red[i].want, "%s %s %s: %04x op %04x = %04x, want %04x", isas[k],
                          hc_dtype_name(red[i].t), hc_op_name(red[i].op), red[i].a, red[i].b, got,
                          red[i].want);
        }
    }
}
END_TEST

/* FP32/FP64 NaN, -0.0 and inf rules (all ISAs). */
START_TEST(test_float_rules)
{
    enum { N = 40 };
    for (size_t k = 0; k < NELEM(isas); k++) {
        if (!isa_usable(isas[k]))
            continue;
        float a[N], b[N], d[N];
        double da[N], db[N], dd[N];
        for (int i = 0; i < N; i++) {
            a[i] = ffrom(0xffc12345u), b[i] = 1.0f;   /* NaN with a payload */
            da[i] = dfrom(0x7ff0000000000001ull), db[i] = dfrom(0xfff8000000000abcull);
        }
        hc_reduce(d, a, b, N, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM);
        hc_reduce(dd, da, db, N, HCCL_DATA_TYPE_FP64, HCCL_REDUCE_MIN);
        for (int i = 0; i < N; i++) {
            ck_assert_uint_eq(fbits(d[i]), 0x7fc00000u);
            ck_assert_uint_eq(dbits(dd[i]), 0x7ff8000000000000ull);
        }
        for (int i = 0; i < N; i++)
            a[i] = INFINITY, b[i] = -INFINITY, da[i] = -0.0, db[i] = 0.0;
        hc_reduce(d, a, b, N, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM);
        hc_reduce(dd, da, db, N, HCCL_DATA_TYPE_FP64, HCCL_REDUCE_MAX);
        for (int i = 0; i < N; i++) {
            ck_assert_uint_eq(fbits(d[i]), 0x7fc00000u);
            ck_assert_uint_eq(dbits(dd[i]), 0);
        }
        hc_reduce(dd, db, da, N, HCCL_DATA_TYPE_FP64, HCCL_REDUCE_MIN);
        hc_reduce(d, b, a, N, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_MAX);
        for (int i = 0; i < N; i++) {
            ck_assert_uint_eq(dbits(dd[i]), 0x8000000000000000ull);
            ck_assert(d[i] == INFINITY);
        }
    }
}
END_TEST

/* ------------------------------------------------------------ SIMD == scalar */

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    ck_assert_ptr_nonnull(p);
    return p;
}

START_TEST(test_simd_vs_scalar)
{
    const char *isa = isas[_i];
    if (_i == 0 || !isa_usable(isa)) {
        if (_i != 0)
            printf("check_reduce: %s not supported by this CPU, skipped\n", isa);
        return;
    }
    rng_state = 777 + (uint64_t)_i;
    for (int round = 0; round < 6; round++) {
        size_t n = round == 0 ? 4099 : 1 + rnd() % 3000;
        for (size_t ti = 0; ti < NELEM(all_types); ti++) {
            HcclDataType t = all_types[ti];
            size_t es = tsize(t), bytes = n * es;
            char *a = xmalloc(bytes), *b = xmalloc(bytes), *r0 = xmalloc(bytes), *r1 = xmalloc(bytes);
            fill_pair(a, b, n, t);
            for (size_t oi = 0; oi < NELEM(all_ops); oi++) {
                HcclReduceOp op = all_ops[oi];
                if (!supported(t, op))
                    continue;
                hc_reduce_set_isa("scalar");
                hc_reduce(r0, a, b, n, t, op);
                hc_reduce_set_isa(isa);
                hc_reduce(r1, a, b, n, t, op);
                for (size_t i = 0; i < n; i++)
                    ck_assert_msg(memcmp(r0 + i * es, r1 + i * es, es) == 0,
                                  "%s vs scalar: %s %s n=%zu differ at %zu", isa,
                                  hc_dtype_name(t), hc_op_name(op), n, i);
            }
            if (is_fp(t)) { /* AVG finish */
                for (uint32_t div = 2; div <= 7; div += 5) {
                    memcpy(r0, a, bytes);
                    memcpy(r1, a, bytes);
                    hc_reduce_set_isa("scalar");
                    hc_reduce_scale(r0, n, t, div);
                    hc_reduce_set_isa(isa);
                    hc_reduce_scale(r1, n, t, div);
                    ck_assert_msg(memcmp(r0, r1, bytes) == 0, "%s vs scalar: %s scale differs",
                                  isa, hc_dtype_name(t));
                }
            }
            free(a), free(b), free(r0), free(r1);
        }
    }
}
END_TEST

/* ------------------------------------------------------------ multi, scale */

START_TEST(test_multi)
{
    const char *isa = isas[_i];
    if (!isa_usable(isa))
        return;
    rng_state = 99 + (uint64_t)_i;
    enum { MAXSRC = 9 };
    static const size_t counts[] = {1, 17, 1000, 20011}; /* 20011: several blocks of any type */
    for (size_t ci = 0; ci < NELEM(counts); ci++) {
        size_t n = counts[ci];
        for (size_t ti = 0; ti < NELEM(all_types); ti++) {
            HcclDataType t = all_types[ti];
            size_t es = tsize(t), bytes = n * es;
            char *src[MAXSRC], *want = xmalloc(bytes), *got = xmalloc(bytes);
            for (int k = 0; k < MAXSRC; k++)
                src[k] = xmalloc(bytes);
            for (int k = 0; k + 1 < MAXSRC; k += 2)
                fill_pair(src[k], src[k + 1], n, t);
            fill_pair(src[MAXSRC - 1], want, n, t);
            for (size_t oi = 0; oi < NELEM(all_ops); oi++) {
                HcclReduceOp op = all_ops[oi];
                if (!supported(t, op))
                    continue;
                for (size_t ns = 1; ns <= MAXSRC; ns++) {
                    memcpy(want, src[0], bytes);
                    for (size_t k = 1; k < ns; k++)
                        hc_reduce(want, k == 1 ? src[0] : want, src[k], n, t, op);
                    hc_reduce_multi(got, (const void *const *)src, ns, n, t, op);
                    ck_assert_msg(memcmp(got, want, bytes) == 0, "%s multi %s %s nsrc=%zu n=%zu",
                                  isa, hc_dtype_name(t), hc_op_name(op), ns, n);
                    /* dst aliasing src[0] */
                    const void *s2[MAXSRC];
                    memcpy(got, src[0], bytes);
                    s2[0] = got;
                    for (size_t k = 1; k < ns; k++)
                        s2[k] = src[k];
                    hc_reduce_multi(got, s2, ns, n, t, op);
                    ck_assert_msg(memcmp(got, want, bytes) == 0,
                                  "%s multi in place %s %s nsrc=%zu n=%zu", isa, hc_dtype_name(t),
                                  hc_op_name(op), ns, n);
                    /* streamed (src/base/cold.h): dst at an odd offset of a
                     * line, aliasing the last source, one byte either side
                     * untouched */
                    unsigned char *nt = xmalloc(bytes + 64 + 2);
                    unsigned char *nd = nt + 1 + (ci * 7 + ns * 5) % 63;
                    memset(nt, 0xa5, bytes + 66);
                    memcpy(nd, src[ns - 1], bytes);
                    s2[0] = src[0];
                    s2[ns - 1] = nd;
                    hc_reduce_multi_nt(nd, s2, ns, n, t, op);
                    ck_assert_msg(memcmp(nd, want, bytes) == 0 && nd[-1] == 0xa5 &&
                                      nd[bytes] == 0xa5,
                                  "%s multi streamed %s %s nsrc=%zu n=%zu", isa, hc_dtype_name(t),
                                  hc_op_name(op), ns, n);
                    free(nt);
                }
            }
            for (int k = 0; k < MAXSRC; k++)
                free(src[k]);
            free(want), free(got);
        }
    }
}
END_TEST

/* hc_reduce2_nt: the same bits as hc_reduce in both destinations, for
 * destinations aligned alike (the streamed kernel after a head) or not
 * (the blocked path), every offset of the first within a line, with d1
 * aliasing a or b, or d1 b and d2 a (the in-place AllReduce of the higher
 * rank); one guard byte either side of each destination. */
START_TEST(test_reduce2_nt)
{
    const char *isa = isas[_i];
    if (!isa_usable(isa))
        return;
    rng_state = 123 + (uint64_t)_i;
    static const size_t counts[] = {1, 2, 31, 1000, 20011};
    for (size_t ci = 0; ci < NELEM(counts); ci++) {
        const size_t n = counts[ci];
        for (size_t ti = 0; ti < NELEM(all_types); ti++) {
            const HcclDataType t = all_types[ti];
            const size_t es = tsize(t), bytes = n * es;
            char *a = xmalloc(bytes), *b = xmalloc(bytes), *want = xmalloc(bytes);
            unsigned char *m1 = xmalloc(bytes + 130), *m2 = xmalloc(bytes + 130);
            fill_pair(a, b, n, t);
            for (size_t oi = 0; oi < NELEM(all_ops); oi++) {
                const HcclReduceOp op = all_ops[oi];
                if (!supported(t, op))
                    continue;
                hc_reduce(want, a, b, n, t, op);
                for (int mode = 0; mode < 5; mode++) {
                    /* mode 0-1 and 4: d2 at d1's offset in its line (1: d1
                     * = a; 4: d1 = b, d2 = a), 2-3: another offset (3: d1 = b) */
                    const size_t o1 = 1 + (ci * 13 + ti * 7 + oi * 5 + (size_t)mode * 11) % 64;
                    const size_t o2 = mode < 2 ? o1 : 1 + (o1 + 24) % 64;
                    unsigned char *d1 = m1 + ((uintptr_t)(m1 + o1) % es ? o1 + es - (uintptr_t)(m1 + o1) % es : o1);
                    unsigned char *d2 = m2 + ((uintptr_t)(m2 + o2) % es ? o2 + es - (uintptr_t)(m2 + o2) % es : o2);
                    if (mode < 2 || mode == 4) /* same offset in a line: the streamed kernel */
                        d2 = m2 + 64 + (uintptr_t)d1 % 64 - (uintptr_t)m2 % 64;
                    memset(m1, 0xa5, bytes + 130);
                    memset(m2, 0xa5, bytes + 130);
                    const void *x = a, *y = b;
                    if (mode == 1) {
                        memcpy(d1, a, bytes);
                        x = d1;
                    } else if (mode == 3) {
                        memcpy(d1, b, bytes);
                        y = d1;
                    } else if (mode == 4) {
                        memcpy(d1, b, bytes);
                        memcpy(d2, a, bytes);
                        x = d2;
                        y = d1;
                    }
                    hc_reduce2_nt(d1, d2, x, y, n, t, op);
                    ck_assert_msg(memcmp(d1, want, bytes) == 0 && memcmp(d2, want, bytes) == 0,
                                  "%s reduce2_nt %s %s n=%zu mode %d", isa, hc_dtype_name(t),
                                  hc_op_name(op), n, mode);
                    ck_assert_msg(d1[-1] == 0xa5 && d1[bytes] == 0xa5 && d2[-1] == 0xa5 &&
                                      d2[bytes] == 0xa5,
                                  "%s reduce2_nt %s %s n=%zu mode %d: wrote outside", isa,
                                  hc_dtype_name(t), hc_op_name(op), n, mode);
                }
            }
            free(a), free(b), free(want), free(m1), free(m2);
        }
    }
}
END_TEST

START_TEST(test_scale)
{
    const char *isa = isas[_i];
    if (!isa_usable(isa))
        return;
    rng_state = 5 + (uint64_t)_i;
    static const HcclDataType ft[] = {HCCL_DATA_TYPE_FP16, HCCL_DATA_TYPE_BFP16,
                                      HCCL_DATA_TYPE_FP32, HCCL_DATA_TYPE_FP64};
    static const uint32_t divs[] = {1, 2, 3, 7, 8, 1000};
    for (size_t ti = 0; ti < NELEM(ft); ti++) {
        HcclDataType t = ft[ti];
        size_t n = 1037, es = tsize(t);
        char *buf = xmalloc(n * es), *orig = xmalloc(n * es), *want = xmalloc(n * es),
             *junk = xmalloc(n * es);
        fill_pair(orig, junk, n, t);
        for (size_t di = 0; di < NELEM(divs); di++) {
            uint32_t dv = divs[di];
            for (size_t i = 0; i < n; i++) {
                double x = ref_fload(t, orig, i);
                if (dv == 1)
                    memcpy(want + i * es, orig + i * es, es); /* n = 1: untouched */
                else
                    ref_fstore(t, want, i, x / dv);
            }
            memcpy(buf, orig, n * es);
            hc_reduce_scale(buf, n, t, dv);
            for (size_t i = 0; i < n; i++)
                ck_assert_msg(memcmp(buf + i * es, want + i * es, es) == 0,
                              "%s scale %s / %u: element %zu", isa, hc_dtype_name(t), dv, i);
        }
        free(buf), free(orig), free(want), free(junk);
    }
    /* integers are left alone */
    int32_t v[3] = {10, 20, 30};
    hc_reduce_scale(v, 3, HCCL_DATA_TYPE_INT32, 10);
    ck_assert_int_eq(v[0], 10);
    ck_assert_int_eq(v[2], 30);
}
END_TEST

/* ------------------------------------------------------------ hc_copy */

/* hc_copy (src/base/util.h) cuts copies above HC_COPY_PIECE into pieces and
 * keeps memmove's meaning for overlapping ranges: sizes around one and
 * several pieces, odd offsets, both overlap directions, against a byte
 * loop on a copy of the buffer. */
START_TEST(test_copy)
{
    const size_t P = HC_COPY_PIECE;
    const size_t sizes[] = {0, 1, 63, P - 1, P, P + 1, 2 * P, 3 * P + 123};
    const size_t big = 8 * P;
    unsigned char *buf = malloc(big), *ref = malloc(big);
    ck_assert_ptr_nonnull(buf);
    ck_assert_ptr_nonnull(ref);
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        const size_t n = sizes[si];
        /* {dst offset, src offset}: apart, dst below src overlapping, dst
         * above src overlapping (a forward piecewise copy would corrupt it) */
        const size_t cases[][2] = {{5, n + 4101}, {3, 3 + n / 3 + 1}, {7 + n / 2 + 1, 7}};
        for (size_t ci = 0; ci < 3; ci++) {
            const size_t d = cases[ci][0], sr = cases[ci][1];
            if (d + n > big || sr + n > big)
                continue;
            for (size_t i = 0; i < big; i++)
                buf[i] = ref[i] = (unsigned char)(i * 131u + (i >> 9) + si);
            if (d < sr) {
                for (size_t i = 0; i < n; i++)
                    ref[d + i] = ref[sr + i];
            } else {
                for (size_t i = n; i-- > 0;)
                    ref[d + i] = ref[sr + i];
            }
            hc_copy(buf + d, buf + sr, n);
            ck_assert_msg(memcmp(buf, ref, big) == 0, "hc_copy n=%zu case %zu differs", n, ci);
        }
    }
    free(buf);
    free(ref);
}
END_TEST

/* hc_copy_nt (src/base/cold.h): every size up to a few lines past a whole
 * line, then large ones, at every offset of dst and src within a line;
 * the bytes around dst stay. */
START_TEST(test_copy_nt)
{
    const size_t big = (256u << 10) + 200;
    unsigned char *src = malloc(big + 64), *buf = malloc(big + 192);
    ck_assert_ptr_nonnull(src);
    ck_assert_ptr_nonnull(buf);
    for (size_t i = 0; i < big + 64; i++)
        src[i] = (unsigned char)(i * 37u + (i >> 8));
    for (size_t n = 0; n <= big; n = n < 300 ? n + 1 : n * 3 + 4093) {
        for (size_t od = 0; od < 64; od += n < 300 ? 7 : 13) {
            const size_t os = (od * 5 + n) % 64;
            memset(buf, 0x3c, big + 192);
            hc_copy_nt(buf + 64 + od, src + os, n);
            ck_assert_msg(memcmp(buf + 64 + od, src + os, n) == 0, "hc_copy_nt n=%zu od=%zu os=%zu",
                          n, od, os);
            ck_assert_msg(buf[63 + od] == 0x3c && buf[64 + od + n] == 0x3c,
                          "hc_copy_nt n=%zu od=%zu wrote outside", n, od);
        }
    }
    free(src);
    free(buf);
}
END_TEST

/* hc_copy_lines (src/base/util.h): every size up to past HC_COPY_LINES_MAX at
 * every offset of dst within a line (a line-aligned buffer), src at
 * several; every byte of the buffer is checked, so nothing outside
 * [dst, dst + n) may change. */
START_TEST(test_copy_lines)
{
    /* aligned_alloc wants a size that is a multiple of the alignment */
    const size_t max = HC_COPY_LINES_MAX + 70, big = (max + 256 + 63) / 64 * 64;
    unsigned char *src = aligned_alloc(64, big), *buf = aligned_alloc(64, big);
    unsigned char *ref = malloc(big);
    ck_assert_ptr_nonnull(src);
    ck_assert_ptr_nonnull(buf);
    ck_assert_ptr_nonnull(ref);
    for (size_t i = 0; i < big; i++)
        src[i] = (unsigned char)(i * 29u + 7);
    for (size_t n = 0; n <= max; n++) {
        for (size_t od = 0; od < 64; od++) {
            const size_t os = (od * 11 + n) % 64;
            memset(buf, 0xa5, big);
            memset(ref, 0xa5, big);
            memcpy(ref + 64 + od, src + os, n);
            hc_copy_lines(buf + 64 + od, src + os, n);
            ck_assert_msg(memcmp(buf, ref, big) == 0, "hc_copy_lines n=%zu od=%zu os=%zu", n, od,
                          os);
        }
    }
    free(src);
    free(buf);
    free(ref);
}
END_TEST

/* ------------------------------------------------------------ CUDA */

START_TEST(test_cuda)
{
    int v[4] = {1, 2, 3, 4}, w[4] = {0};
    ck_assert_int_eq(hc_cuda_is_device_ptr(v), 0);
    ck_assert_int_eq(hc_cuda_is_device_ptr(NULL), 0);
    ck_assert_int_eq(hc_cuda_memcpy(w, v, sizeof v), HCCL_SUCCESS);
    ck_assert_int_eq(w[3], 4);
    ck_assert_int_eq(hc_cuda_reduce(w, v, v, 4, (HcclDataType)13, HCCL_REDUCE_SUM, NULL),
                     HCCL_E_PARA);
    ck_assert_int_eq(hc_cuda_reduce(w, v, v, 4, HCCL_DATA_TYPE_FP8E5M2, HCCL_REDUCE_SUM, NULL),
                     HCCL_E_NOT_SUPPORT);
    ck_assert_int_eq(hc_cuda_sync(NULL), HCCL_SUCCESS);
    if (!hc_cuda_available()) {
        ck_assert_int_eq(hc_cuda_reduce(w, v, v, 4, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, NULL),
                         HCCL_E_NOT_SUPPORT);
        ck_assert_ptr_null(hc_cuda_malloc(64));
        printf("check_reduce: no CUDA device, device kernels not tested\n");
        return;
    }

    /* device kernels == host scalar kernels, bit for bit */
    static const size_t cn[] = {1, 1000, 4099, 100003};
    rng_state = 2024;
    hc_reduce_set_isa("scalar");
    for (size_t ci = 0; ci < NELEM(cn); ci++) {
        size_t n = cn[ci];
        for (size_t ti = 0; ti < NELEM(all_types); ti++) {
            HcclDataType t = all_types[ti];
            size_t es = tsize(t), bytes = n * es;
            char *a = xmalloc(bytes), *b = xmalloc(bytes), *want = xmalloc(bytes),
                 *got = xmalloc(bytes);
            void *da = hc_cuda_malloc(bytes), *db = hc_cuda_malloc(bytes), *dd = hc_cuda_malloc(bytes);
            ck_assert(da && db && dd);
            ck_assert_int_eq(hc_cuda_is_device_ptr(da), 1);
            fill_pair(a, b, n, t);
            ck_assert_int_eq(hc_cuda_memcpy(db, b, bytes), HCCL_SUCCESS);
            for (size_t oi = 0; oi < NELEM(all_ops); oi++) {
                HcclReduceOp op = all_ops[oi];
                if (!supported(t, op))
                    continue;
                hc_reduce(want, a, b, n, t, op);
                ck_assert_int_eq(hc_cuda_memcpy(da, a, bytes), HCCL_SUCCESS);
                ck_assert_int_eq(hc_cuda_reduce(dd, da, db, n, t, op, NULL), HCCL_SUCCESS);
                ck_assert_int_eq(hc_cuda_sync(NULL), HCCL_SUCCESS);
                ck_assert_int_eq(hc_cuda_memcpy(got, dd, bytes), HCCL_SUCCESS);
                for (size_t i = 0; i < n; i++)
                    ck_assert_msg(memcmp(got + i * es, want + i * es, es) == 0,
                                  "cuda %s %s n=%zu differs at %zu", hc_dtype_name(t),
                                  hc_op_name(op), n, i);
                /* in place: dst == a */
                ck_assert_int_eq(hc_cuda_reduce(da, da, db, n, t, op, NULL), HCCL_SUCCESS);
                ck_assert_int_eq(hc_cuda_sync(NULL), HCCL_SUCCESS);
                ck_assert_int_eq(hc_cuda_memcpy(got, da, bytes), HCCL_SUCCESS);
                ck_assert_msg(memcmp(got, want, bytes) == 0, "cuda in place %s %s n=%zu",
                              hc_dtype_name(t), hc_op_name(op), n);
            }
            if (is_fp(t)) {
                memcpy(want, a, bytes);
                hc_reduce_scale(want, n, t, 3);
                ck_assert_int_eq(hc_cuda_memcpy(da, a, bytes), HCCL_SUCCESS);
                ck_assert_int_eq(hc_cuda_scale(da, n, t, 3, NULL), HCCL_SUCCESS);
                ck_assert_int_eq(hc_cuda_sync(NULL), HCCL_SUCCESS);
                ck_assert_int_eq(hc_cuda_memcpy(got, da, bytes), HCCL_SUCCESS);
                ck_assert_msg(memcmp(got, want, bytes) == 0, "cuda scale %s n=%zu",
                              hc_dtype_name(t), n);
            }
            hc_cuda_free(da), hc_cuda_free(db), hc_cuda_free(dd);
            free(a), free(b), free(want), free(got);
        }
    }
}
END_TEST

/* ------------------------------------------------------------ main */

static Suite *reduce_suite(void)
{
    Suite *s = suite_create("reduce");
    TCase *tc = tcase_create("basics");
    tcase_add_test(tc, test_names);
    tcase_add_test(tc, test_check_codes);
    tcase_add_test(tc, test_isa_select);
    tcase_add_test(tc, test_unsupported_noop);
    tcase_add_test(tc, test_int_wrap);
    tcase_add_test(tc, test_int128);
    tcase_add_test(tc, test_float_rules);
    tcase_add_test(tc, test_copy);
    tcase_add_test(tc, test_copy_nt);
    tcase_add_test(tc, test_copy_lines);
    suite_add_tcase(s, tc);

    tc = tcase_create("fp16_bf16");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_conv_exhaustive);
    tcase_add_test(tc, test_conv_rounding);
    tcase_add_test(tc, test_half_rounding);
    suite_add_tcase(s, tc);

    tc = tcase_create("kernels");
    tcase_set_timeout(tc, 600);
    tcase_add_loop_test(tc, test_reduce_vs_ref, 0, (int)NELEM(isas));
    tcase_add_loop_test(tc, test_simd_vs_scalar, 0, (int)NELEM(isas));
    tcase_add_loop_test(tc, test_multi, 0, (int)NELEM(isas));
    tcase_add_loop_test(tc, test_reduce2_nt, 0, (int)NELEM(isas));
    tcase_add_loop_test(tc, test_scale, 0, (int)NELEM(isas));
    suite_add_tcase(s, tc);

    tc = tcase_create("cuda");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_cuda);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(reduce_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
