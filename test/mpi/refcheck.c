/*
 * test/mpi/refcheck.c - reference reductions, input generation, guarded
 * buffers and comparison helpers for the MPI tests (see refcheck.h).
 *
 * Written against the public headers only; the fp16/bf16 conversions are
 * this file's own (bit manipulation, round to nearest-even), not hcomm's.
 */
#include "refcheck.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ types */

size_t rc_esize(HcclDataType t)
{
    switch (t) {
    case HCCL_DATA_TYPE_INT8:
    case HCCL_DATA_TYPE_UINT8:
    case HCCL_DATA_TYPE_FP8E4M3:
    case HCCL_DATA_TYPE_FP8E5M2:
        return 1;
    case HCCL_DATA_TYPE_INT16:
    case HCCL_DATA_TYPE_UINT16:
    case HCCL_DATA_TYPE_FP16:
    case HCCL_DATA_TYPE_BFP16:
        return 2;
    case HCCL_DATA_TYPE_INT32:
    case HCCL_DATA_TYPE_UINT32:
    case HCCL_DATA_TYPE_FP32:
        return 4;
    case HCCL_DATA_TYPE_INT64:
    case HCCL_DATA_TYPE_UINT64:
    case HCCL_DATA_TYPE_FP64:
        return 8;
    case HCCL_DATA_TYPE_INT128:
        return 16;
    default:
        return 0;
    }
}

const char *rc_type_name(HcclDataType t)
{
    switch (t) {
    case HCCL_DATA_TYPE_INT8: return "int8";
    case HCCL_DATA_TYPE_INT16: return "int16";
    case HCCL_DATA_TYPE_INT32: return "int32";
    case HCCL_DATA_TYPE_INT64: return "int64";
    case HCCL_DATA_TYPE_UINT8: return "uint8";
    case HCCL_DATA_TYPE_UINT16: return "uint16";
    case HCCL_DATA_TYPE_UINT32: return "uint32";
    case HCCL_DATA_TYPE_UINT64: return "uint64";
    case HCCL_DATA_TYPE_FP16: return "fp16";
    case HCCL_DATA_TYPE_BFP16: return "bf16";
    case HCCL_DATA_TYPE_FP32: return "fp32";
    case HCCL_DATA_TYPE_FP64: return "fp64";
    case HCCL_DATA_TYPE_INT128: return "int128";
    case HCCL_DATA_TYPE_FP8E4M3: return "fp8e4m3";
    case HCCL_DATA_TYPE_FP8E5M2: return "fp8e5m2";
    default: return "unknown";
    }
}

const char *rc_op_name(HcclReduceOp op)
{
    switch (op) {
    case HCCL_REDUCE_SUM: return "sum";
    case HCCL_REDUCE_PROD: return "prod";
    case HCCL_REDUCE_MAX: return "max";
    case HCCL_REDUCE_MIN: return "min";
    case HCCL_REDUCE_AVG: return "avg";
    default: return "unknown";
    }
}

int rc_type_is_float(HcclDataType t)
{
    return t == HCCL_DATA_TYPE_FP16 || t == HCCL_DATA_TYPE_BFP16 ||
           t == HCCL_DATA_TYPE_FP32 || t == HCCL_DATA_TYPE_FP64;
}

int rc_type_is_fp8(HcclDataType t)
{
    return t == HCCL_DATA_TYPE_FP8E4M3 || t == HCCL_DATA_TYPE_FP8E5M2;
}

HcclResult rc_reduce_expected(HcclDataType t, HcclReduceOp op)
{
    if (rc_esize(t) == 0)
        return HCCL_E_PARA;
    if ((unsigned)op > (unsigned)HCCL_REDUCE_AVG)
        return HCCL_E_PARA;
    if (rc_type_is_fp8(t))
        return HCCL_E_NOT_SUPPORT;
    if (op == HCCL_REDUCE_AVG && !rc_type_is_float(t))
        return HCCL_E_NOT_SUPPORT;
    if (t == HCCL_DATA_TYPE_INT128 && op == HCCL_REDUCE_PROD)
        return HCCL_E_NOT_SUPPORT;
    return HCCL_SUCCESS;
}

int rc_mpi_type(HcclDataType t, MPI_Datatype *mt)
{
    switch (t) {
    case HCCL_DATA_TYPE_INT8: *mt = MPI_INT8_T; return 1;
    case HCCL_DATA_TYPE_INT16: *mt = MPI_INT16_T; return 1;
    case HCCL_DATA_TYPE_INT32: *mt = MPI_INT32_T; return 1;
    case HCCL_DATA_TYPE_INT64: *mt = MPI_INT64_T; return 1;
    case HCCL_DATA_TYPE_UINT8: *mt = MPI_UINT8_T; return 1;
    case HCCL_DATA_TYPE_UINT16: *mt = MPI_UINT16_T; return 1;
    case HCCL_DATA_TYPE_UINT32: *mt = MPI_UINT32_T; return 1;
    case HCCL_DATA_TYPE_UINT64: *mt = MPI_UINT64_T; return 1;
    case HCCL_DATA_TYPE_FP32: *mt = MPI_FLOAT; return 1;
    case HCCL_DATA_TYPE_FP64: *mt = MPI_DOUBLE; return 1;
    default: return 0;
    }
}

static int rc_mpi_op(HcclReduceOp op, MPI_Op *mo)
{
    switch (op) {
    case HCCL_REDUCE_SUM: *mo = MPI_SUM; return 1;
    case HCCL_REDUCE_PROD: *mo = MPI_PROD; return 1;
    case HCCL_REDUCE_MAX: *mo = MPI_MAX; return 1;
    case HCCL_REDUCE_MIN: *mo = MPI_MIN; return 1;
    default: return 0;
    }
}

/* ------------------------------------------------------ conversions */

static uint32_t f2u(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float u2f(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

float rc_fp16_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    if (exp == 0x1f) /* inf / NaN */
        return u2f(sign | 0x7f800000u | (man << 13));
    if (exp == 0) {
        if (man == 0)
            return u2f(sign);
        /* subnormal: man * 2^-24, exact in float */
        float v = (float)man * (1.0f / 16777216.0f);
        return sign ? -v : v;
    }
    return u2f(sign | ((exp + 112u) << 23) | (man << 13));
}

uint16_t rc_float_to_fp16(float f)
{
    uint32_t u = f2u(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t exp = (u >> 23) & 0xffu;
    uint32_t man = u & 0x7fffffu;
    if (exp == 0xff) /* inf / NaN (keep NaN quiet and non-zero) */
        return (uint16_t)(sign | 0x7c00u | (man ? (0x200u | (man >> 13)) : 0));
    int e = (int)exp - 127 + 15; /* biased fp16 exponent */
    if (e >= 0x1f)
        return (uint16_t)(sign | 0x7c00u); /* overflow -> inf */
    if (e <= 0) {
        /* subnormal or zero in fp16: value = mant24 * 2^(exp-150);
         * fp16 subnormal unit is 2^-24, so shift = 126 - exp (>= 14). */
        if (e < -10)
            return sign; /* below half of the smallest subnormal (RNE -> 0) */
        uint32_t m = man | 0x800000u;
        unsigned shift = (unsigned)(126 - (int)exp);
        uint32_t q = m >> shift;
        uint32_t rem = m & ((1u << shift) - 1);
        uint32_t half = 1u << (shift - 1);
        if (rem > half || (rem == half && (q & 1)))
            q++;
        return (uint16_t)(sign | q); /* q may carry into the exponent: OK */
    }
    uint32_t q = ((uint32_t)e << 10) | (man >> 13);
    uint32_t rem = man & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (q & 1)))
        q++; /* may carry into the exponent, up to inf: correct */
    return (uint16_t)(sign | q);
}

float rc_bf16_to_float(uint16_t h)
{
    return u2f((uint32_t)h << 16);
}

uint16_t rc_float_to_bf16(float f)
{
    uint32_t u = f2u(f);
    if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x7fffffu))
        return (uint16_t)((u >> 16) | 0x40u); /* quiet NaN */
    uint32_t lsb = (u >> 16) & 1u;
    return (uint16_t)((u + 0x7fffu + lsb) >> 16);
}

/* --------------------------------------------------------- generation */

static uint64_t splitmix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

uint64_t rc_hash3(uint64_t seed, uint64_t a, uint64_t b)
{
    return splitmix(splitmix(splitmix(seed) ^ a) ^ (b * 0x2545f4914f6cdd1dull));
}

void rc_fill_bytes(void *buf, size_t bytes, int rank, uint64_t seed)
{
    unsigned char *p = buf;
    size_t i = 0;
    for (; i + 8 <= bytes; i += 8) {
        uint64_t r = rc_hash3(seed, (uint64_t)rank, i);
        memcpy(p + i, &r, 8);
    }
    if (i < bytes) {
        uint64_t r = rc_hash3(seed, (uint64_t)rank, i);
        memcpy(p + i, &r, bytes - i);
    }
}

/* An integer uniformly in [-maxabs, maxabs] (maxabs <= INT64_MAX; no
 * signed arithmetic that could overflow at maxabs = INT64_MAX). */
static int64_t sym(uint64_t r, uint64_t maxabs)
{
    const uint64_t u = r % (2 * maxabs + 1);
    return u >= maxabs ? (int64_t)(u - maxabs) : -(int64_t)(maxabs - u);
}

static int sbits(HcclDataType t)
{
    return (int)rc_esize(t) * 8;
}

static int is_signed_int(HcclDataType t)
{
    return t == HCCL_DATA_TYPE_INT8 || t == HCCL_DATA_TYPE_INT16 ||
           t == HCCL_DATA_TYPE_INT32 || t == HCCL_DATA_TYPE_INT64;
}

static int is_unsigned_int(HcclDataType t)
{
    return t == HCCL_DATA_TYPE_UINT8 || t == HCCL_DATA_TYPE_UINT16 ||
           t == HCCL_DATA_TYPE_UINT32 || t == HCCL_DATA_TYPE_UINT64;
}

static void store_int(void *buf, size_t i, size_t es, uint64_t v)
{
    /* little-endian truncation */
    memcpy((unsigned char *)buf + i * es, &v, es);
}

/* A float value for (op) in the "exact" ranges described in refcheck.h. */
static double float_value(HcclDataType t, HcclReduceOp op, uint64_t r, int rank, int n)
{
    (void)rank;
    switch (op) {
    case HCCL_REDUCE_SUM:
        if (t == HCCL_DATA_TYPE_FP16)
            return (double)sym(r, 64) / 4.0;
        if (t == HCCL_DATA_TYPE_BFP16)
            return (double)sym(r, 8);
        if (t == HCCL_DATA_TYPE_FP32)
            return (double)sym(r, 1u << 15) / 8.0;
        return (double)sym(r, 1ull << 40) / 8.0;
    case HCCL_REDUCE_PROD: {
        static const double v[4] = {1.0, 2.0, 0.5, -1.0};
        return v[r & 3];
    }
    case HCCL_REDUCE_AVG: {
        uint64_t kmax;
        if (t == HCCL_DATA_TYPE_FP16)
            kmax = 2048u / (uint64_t)(n * n);
        else if (t == HCCL_DATA_TYPE_BFP16)
            kmax = 256u / (uint64_t)(n * n);
        else
            kmax = 1u << 12;
        if (kmax > 16 && (t == HCCL_DATA_TYPE_FP16 || t == HCCL_DATA_TYPE_BFP16))
            kmax = 16;
        if (kmax < 1)
            kmax = 1;
        double k = (double)sym(r, kmax);
        if (t == HCCL_DATA_TYPE_FP32 || t == HCCL_DATA_TYPE_FP64)
            k /= 8.0;
        return (double)n * k;
    }
    default:
        return 0.0;
    }
}

static int g_inexact;

void rc_set_inexact(int on)
{
    g_inexact = on;
}

/* An arbitrary value for inexact mode: m * 2^e with a random 24-bit
 * mantissa m in [1, 2) and e in [emin, emax], random sign. */
static double inexact_value(uint64_t r, int emin, int emax)
{
    double m = 1.0 + (double)(r & 0xffffff) / 16777216.0;
    int e = emin + (int)((r >> 24) % (uint64_t)(emax - emin + 1));
    double v = m;
    for (; e > 0; e--)
        v *= 2.0;
    for (; e < 0; e++)
        v *= 0.5;
    return (r >> 40) & 1 ? -v : v;
}

void rc_fill_reduce(void *buf, size_t count, HcclDataType t, HcclReduceOp op, int rank,
                    int nranks, uint64_t seed)
{
    if (g_inexact && rc_type_is_float(t) && op != HCCL_REDUCE_MAX && op != HCCL_REDUCE_MIN) {
        for (size_t i = 0; i < count; i++) {
            uint64_t r = rc_hash3(seed, (uint64_t)rank, i);
            double v;
            if (t == HCCL_DATA_TYPE_FP16)
                v = op == HCCL_REDUCE_PROD ? inexact_value(r, -13, 7) : inexact_value(r, -14, 14);
            else if (t == HCCL_DATA_TYPE_BFP16)
                v = op == HCCL_REDUCE_PROD ? inexact_value(r, -60, 60) : inexact_value(r, -20, 20);
            else
                v = inexact_value(r, -30, 30);
            if (t == HCCL_DATA_TYPE_FP64) {
                v += (double)(r >> 41) * 0x1p-60 * v; /* use the low mantissa bits too */
                memcpy((unsigned char *)buf + i * 8, &v, 8);
            } else if (t == HCCL_DATA_TYPE_FP32) {
                float f = (float)v;
                memcpy((unsigned char *)buf + i * 4, &f, 4);
            } else if (t == HCCL_DATA_TYPE_FP16) {
                uint16_t h = rc_float_to_fp16((float)v);
                memcpy((unsigned char *)buf + i * 2, &h, 2);
            } else {
                uint16_t h = rc_float_to_bf16((float)v);
                memcpy((unsigned char *)buf + i * 2, &h, 2);
            }
        }
        return;
    }

    size_t es = rc_esize(t);
    int n = nranks < 1 ? 1 : nranks;
    for (size_t i = 0; i < count; i++) {
        uint64_t r = rc_hash3(seed, (uint64_t)rank, i);
        uint64_t r2 = rc_hash3(seed ^ 0x5555, (uint64_t)rank, i);
        if (is_signed_int(t)) {
            int w = sbits(t);
            uint64_t maxv = (w == 64) ? INT64_MAX : ((1ull << (w - 1)) - 1);
            int64_t v;
            if (op == HCCL_REDUCE_SUM) {
                v = sym(r, maxv / (uint64_t)n);
            } else if (op == HCCL_REDUCE_PROD) {
                /* |product| <= 2^(w-2): at most w-2 ranks contribute a 2 */
                v = (rank < w - 2 && ((r >> 8) & 1)) ? 2 : 1;
                if (r & 1)
                    v = -v;
            } else {
                v = (int64_t)r; /* full range, truncated on store */
            }
            store_int(buf, i, es, (uint64_t)v);
        } else if (is_unsigned_int(t)) {
            uint64_t v;
            if (op == HCCL_REDUCE_PROD)
                v = r % 3 + 1; /* wraps mod 2^w; no int overflow for n <= 8 */
            else
                v = r;
            store_int(buf, i, es, v);
        } else if (t == HCCL_DATA_TYPE_INT128) {
            unsigned __int128 v;
            if (op == HCCL_REDUCE_SUM) {
                /* |v| < 2^120: no overflow for any reasonable rank count */
                int64_t hi = (int64_t)r2 >> 9;
                v = ((unsigned __int128)(__int128)hi << 64) | r;
            } else {
                v = ((unsigned __int128)r2 << 64) | r;
            }
            memcpy((unsigned char *)buf + i * 16, &v, 16);
        } else if (rc_type_is_float(t)) {
            if (op == HCCL_REDUCE_MAX || op == HCCL_REDUCE_MIN) {
                /* arbitrary finite values, no -0 (max(+0,-0) is ambiguous) */
                if (t == HCCL_DATA_TYPE_FP64) {
                    uint64_t u = r;
                    if (((u >> 52) & 0x7ff) == 0x7ff)
                        u &= ~(1ull << 62);
                    if (u == (1ull << 63))
                        u = 0;
                    memcpy((unsigned char *)buf + i * 8, &u, 8);
                } else if (t == HCCL_DATA_TYPE_FP32) {
                    uint32_t u = (uint32_t)r;
                    if (((u >> 23) & 0xff) == 0xff)
                        u &= ~(1u << 30);
                    if (u == 0x80000000u)
                        u = 0;
                    memcpy((unsigned char *)buf + i * 4, &u, 4);
                } else if (t == HCCL_DATA_TYPE_FP16) {
                    uint16_t u = (uint16_t)r;
                    if (((u >> 10) & 0x1f) == 0x1f)
                        u &= (uint16_t)~(1u << 14);
                    if (u == 0x8000u)
                        u = 0;
                    memcpy((unsigned char *)buf + i * 2, &u, 2);
                } else { /* bf16: no zero/subnormal, no inf/NaN */
                    uint16_t u = (uint16_t)r;
                    unsigned e = (u >> 7) & 0xff;
                    if (e == 0xff)
                        u &= (uint16_t)~(1u << 14);
                    if (e == 0)
                        u |= (uint16_t)(1u << 7);
                    memcpy((unsigned char *)buf + i * 2, &u, 2);
                }
                continue;
            }
            double v = float_value(t, op, r, rank, n);
            if (t == HCCL_DATA_TYPE_FP64) {
                memcpy((unsigned char *)buf + i * 8, &v, 8);
            } else if (t == HCCL_DATA_TYPE_FP32) {
                float f = (float)v;
                memcpy((unsigned char *)buf + i * 4, &f, 4);
            } else if (t == HCCL_DATA_TYPE_FP16) {
                uint16_t h = rc_float_to_fp16((float)v);
                memcpy((unsigned char *)buf + i * 2, &h, 2);
            } else {
                uint16_t h = rc_float_to_bf16((float)v);
                memcpy((unsigned char *)buf + i * 2, &h, 2);
            }
        } else { /* FP8 or unknown: random bytes */
            store_int(buf, i, es ? es : 1, r);
        }
    }
}

/* ------------------------------------------------------- reductions */

#define RC_INT_LOOP(T, UT)                                                       \
    do {                                                                         \
        T *a = acc;                                                              \
        const T *b = in;                                                         \
        for (size_t i = 0; i < count; i++) {                                     \
            switch (op) {                                                        \
            case HCCL_REDUCE_SUM: a[i] = (T)((UT)a[i] + (UT)b[i]); break;        \
            case HCCL_REDUCE_PROD:                                               \
                a[i] = (T)((uint64_t)(UT)a[i] * (uint64_t)(UT)b[i]);             \
                break;                                                           \
            case HCCL_REDUCE_MAX: if (b[i] > a[i]) a[i] = b[i]; break;           \
            case HCCL_REDUCE_MIN: if (b[i] < a[i]) a[i] = b[i]; break;           \
            default: break;                                                      \
            }                                                                    \
        }                                                                        \
    } while (0)

#define RC_FLT_LOOP(T)                                                           \
    do {                                                                         \
        T *a = acc;                                                              \
        const T *b = in;                                                         \
        for (size_t i = 0; i < count; i++) {                                     \
            switch (op) {                                                        \
            case HCCL_REDUCE_AVG:                                                \
            case HCCL_REDUCE_SUM: a[i] = a[i] + b[i]; break;                     \
            case HCCL_REDUCE_PROD: a[i] = a[i] * b[i]; break;                    \
            case HCCL_REDUCE_MAX: if (b[i] > a[i]) a[i] = b[i]; break;           \
            case HCCL_REDUCE_MIN: if (b[i] < a[i]) a[i] = b[i]; break;           \
            default: break;                                                      \
            }                                                                    \
        }                                                                        \
    } while (0)

static float half_op(float a, float b, HcclReduceOp op)
{
    switch (op) {
    case HCCL_REDUCE_AVG:
    case HCCL_REDUCE_SUM: return a + b;
    case HCCL_REDUCE_PROD: return a * b;
    case HCCL_REDUCE_MAX: return b > a ? b : a;
    case HCCL_REDUCE_MIN: return b < a ? b : a;
    default: return a;
    }
}

void rc_reduce_local(void *acc, const void *in, size_t count, HcclDataType t,
                     HcclReduceOp op)
{
    switch (t) {
    case HCCL_DATA_TYPE_INT8: RC_INT_LOOP(int8_t, uint8_t); break;
    case HCCL_DATA_TYPE_INT16: RC_INT_LOOP(int16_t, uint16_t); break;
    case HCCL_DATA_TYPE_INT32: RC_INT_LOOP(int32_t, uint32_t); break;
    case HCCL_DATA_TYPE_INT64: RC_INT_LOOP(int64_t, uint64_t); break;
    case HCCL_DATA_TYPE_UINT8: RC_INT_LOOP(uint8_t, uint8_t); break;
    case HCCL_DATA_TYPE_UINT16: RC_INT_LOOP(uint16_t, uint16_t); break;
    case HCCL_DATA_TYPE_UINT32: RC_INT_LOOP(uint32_t, uint32_t); break;
    case HCCL_DATA_TYPE_UINT64: RC_INT_LOOP(uint64_t, uint64_t); break;
    case HCCL_DATA_TYPE_FP32: RC_FLT_LOOP(float); break;
    case HCCL_DATA_TYPE_FP64: RC_FLT_LOOP(double); break;
    case HCCL_DATA_TYPE_FP16:
    case HCCL_DATA_TYPE_BFP16: {
        uint16_t *a = acc;
        const uint16_t *b = in;
        int bf = t == HCCL_DATA_TYPE_BFP16;
        for (size_t i = 0; i < count; i++) {
            float x = bf ? rc_bf16_to_float(a[i]) : rc_fp16_to_float(a[i]);
            float y = bf ? rc_bf16_to_float(b[i]) : rc_fp16_to_float(b[i]);
            float z = half_op(x, y, op);
            a[i] = bf ? rc_float_to_bf16(z) : rc_float_to_fp16(z);
        }
        break;
    }
    case HCCL_DATA_TYPE_INT128: {
        unsigned char *a = acc;
        const unsigned char *b = in;
        for (size_t i = 0; i < count; i++) {
            __int128 x, y;
            memcpy(&x, a + 16 * i, 16);
            memcpy(&y, b + 16 * i, 16);
            if (op == HCCL_REDUCE_SUM)
                x = (__int128)((unsigned __int128)x + (unsigned __int128)y);
            else if (op == HCCL_REDUCE_MAX)
                x = y > x ? y : x;
            else if (op == HCCL_REDUCE_MIN)
                x = y < x ? y : x;
            memcpy(a + 16 * i, &x, 16);
        }
        break;
    }
    default:
        break;
    }
}

void rc_scale_local(void *buf, size_t count, HcclDataType t, int n)
{
    for (size_t i = 0; i < count; i++) {
        if (t == HCCL_DATA_TYPE_FP32) {
            float *p = (float *)buf + i;
            *p = *p / (float)n;
        } else if (t == HCCL_DATA_TYPE_FP64) {
            double *p = (double *)buf + i;
            *p = *p / (double)n;
        } else if (t == HCCL_DATA_TYPE_FP16) {
            uint16_t *p = (uint16_t *)buf + i;
            *p = rc_float_to_fp16(rc_fp16_to_float(*p) / (float)n);
        } else if (t == HCCL_DATA_TYPE_BFP16) {
            uint16_t *p = (uint16_t *)buf + i;
            *p = rc_float_to_bf16(rc_bf16_to_float(*p) / (float)n);
        }
    }
}

/* Reference by MPI_Allgather of the inputs and a local reduction in rank
 * order. */
static void reduce_by_allgather(const void *in, void *out, size_t count, HcclDataType t,
                                HcclReduceOp op, MPI_Comm comm)
{
    int n;
    MPI_Comm_size(comm, &n);
    size_t es = rc_esize(t);
    unsigned char *all = malloc(count * es * (size_t)n + 1);
    if (!all) {
        fprintf(stderr, "refcheck: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Allgather(in, (int)(count * es), MPI_BYTE, all, (int)(count * es), MPI_BYTE, comm);
    if (count)
        memcpy(out, all, count * es);
    for (int r = 1; r < n; r++)
        rc_reduce_local(out, all + (size_t)r * count * es, count, t, op);
    free(all);
}

/* Is MPI's own reduction right for (t, op)? Checked once per pair, by
 * MPI_Reduce_local (the same operation functions as MPI's collectives) on
 * three ranks' inputs from rc_fill_reduce, against rc_reduce_local. Local,
 * so the answer is the same on every rank whatever communicator asks first
 * (a check by a collective would let the ranks of a sub-communicator
 * remember a pair that the others have yet to check, and ask again
 * collectively where they do not). Open MPI 4.1.4's op/avx component, for
 * one, saturates MPI_UINT8_T and MPI_UINT16_T sums instead of wrapping. */
static signed char mpi_trust[256][HCCL_REDUCE_AVG + 1]; /* 0 unknown, 1 yes, -1 no */

static int mpi_reduction_ok(HcclDataType t, HcclReduceOp op, MPI_Datatype mt, MPI_Op mo)
{
    signed char *v = &mpi_trust[(unsigned)t & 0xff][op];
    if (*v)
        return *v > 0;
    const size_t cnt = 1031, es = rc_esize(t);
    unsigned char *in = malloc(cnt * es), *a = malloc(cnt * es), *b = malloc(cnt * es);
    if (!in || !a || !b) {
        fprintf(stderr, "refcheck: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int same = 1;
    for (size_t c = 1; c <= cnt; c += cnt - 1) { /* a short and a long vector */
        const uint64_t seed = 0xfeedull + (uint64_t)t * 8 + (uint64_t)op + c;
        rc_fill_reduce(a, c, t, op, 0, 3, seed);
        memcpy(b, a, c * es);
        for (int r = 1; r < 3; r++) {
            rc_fill_reduce(in, c, t, op, r, 3, seed);
            MPI_Reduce_local(in, a, (int)c, mt, mo);
            rc_reduce_local(b, in, c, t, op);
        }
        if (memcmp(a, b, c * es) != 0)
            same = 0;
    }
    *v = same ? 1 : -1;
    int me = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (!same && me == 0)
        fprintf(stderr, "refcheck: warning: this MPI computes %s %s wrongly (e.g. Open MPI "
                "4.1 op/avx saturates unsigned sums); using a local reference instead\n",
                rc_type_name(t), rc_op_name(op));
    free(in);
    free(a);
    free(b);
    return same;
}

int rc_reference_reduce(const void *in, void *out, size_t count, HcclDataType t,
                        HcclReduceOp op, MPI_Comm comm)
{
    if (rc_reduce_expected(t, op) != HCCL_SUCCESS)
        return -1;
    int n;
    MPI_Comm_size(comm, &n);
    MPI_Datatype mt;
    MPI_Op mo;
    HcclReduceOp base = op == HCCL_REDUCE_AVG ? HCCL_REDUCE_SUM : op;
    if (rc_mpi_type(t, &mt) && rc_mpi_op(base, &mo) && mpi_reduction_ok(t, base, mt, mo))
        MPI_Allreduce(in, out, (int)count, mt, mo, comm);
    else
        reduce_by_allgather(in, out, count, t, base, comm);
    if (op == HCCL_REDUCE_AVG)
        rc_scale_local(out, count, t, n);
    return 0;
}

int rc_reference_reduce_gen(void *out, size_t count, HcclDataType t, HcclReduceOp op,
                            int nranks, uint64_t seed)
{
    if (rc_reduce_expected(t, op) != HCCL_SUCCESS)
        return -1;
    HcclReduceOp base = op == HCCL_REDUCE_AVG ? HCCL_REDUCE_SUM : op;
    size_t es = rc_esize(t);
    unsigned char *tmp = malloc(count * es + 1);
    if (!tmp) {
        fprintf(stderr, "refcheck: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    rc_fill_reduce(out, count, t, op, 0, nranks, seed);
    for (int r = 1; r < nranks; r++) {
        rc_fill_reduce(tmp, count, t, op, r, nranks, seed);
        rc_reduce_local(out, tmp, count, t, base);
    }
    free(tmp);
    if (op == HCCL_REDUCE_AVG)
        rc_scale_local(out, count, t, nranks);
    return 0;
}

/* ------------------------------------------------------------ buffers */

#define RC_GUARD 64

static unsigned char guard_byte(size_t j)
{
    return (unsigned char)(0xa5u ^ (j * 7u));
}

/* rc_buf_pool: a bump allocator over [pool, pool + pool_bytes), reset
 * whenever every block is back; malloc beyond it. */
static unsigned char *pool;
static size_t pool_bytes, pool_top;
static long pool_live;

void rc_buf_pool(void *base, size_t bytes)
{
    pool = base;
    pool_bytes = base ? bytes : 0;
    pool_top = 0;
    pool_live = 0;
}

size_t rc_buf_pool_used(void)
{
    return pool_top;
}

static void *buf_alloc(size_t n)
{
    n = (n + 63) & ~(size_t)63;
    if (pool && n <= pool_bytes - pool_top) {
        void *p = pool + pool_top;
        pool_top += n;
        pool_live++;
        return p;
    }
    return malloc(n);
}

static void buf_release(void *p)
{
    if (pool && (unsigned char *)p >= pool && (unsigned char *)p < pool + pool_bytes) {
        if (--pool_live == 0)
            pool_top = 0;
    } else {
        free(p);
    }
}

int rc_buf_alloc(rc_buf_t *b, size_t bytes, size_t esize)
{
    if (esize == 0)
        esize = 1;
    b->front = RC_GUARD + (esize < 16 ? esize : 0);
    b->back = RC_GUARD;
    b->bytes = bytes;
    b->base = buf_alloc(b->front + bytes + b->back);
    if (!b->base)
        return -1;
    b->p = b->base + b->front;
    for (size_t j = 0; j < b->front; j++)
        b->base[j] = guard_byte(j);
    for (size_t j = 0; j < b->back; j++)
        b->p[bytes + j] = guard_byte(j + 1000);
    return 0;
}

void rc_buf_free(rc_buf_t *b)
{
    buf_release(b->base);
    b->base = b->p = NULL;
}

void rc_buf_poison(rc_buf_t *b, unsigned char salt)
{
    for (size_t i = 0; i < b->bytes; i++)
        b->p[i] = (unsigned char)(salt ^ (i * 13u));
}

long rc_buf_guard_check(const rc_buf_t *b)
{
    for (size_t j = 0; j < b->front; j++)
        if (b->base[j] != guard_byte(j))
            return -(long)(b->front - j);
    for (size_t j = 0; j < b->back; j++)
        if (b->p[b->bytes + j] != guard_byte(j + 1000))
            return (long)j + 1;
    return 0;
}

/* --------------------------------------------------------- comparison */

long rc_first_diff(const void *got, const void *exp, size_t count, size_t esize)
{
    if (count == 0 || memcmp(got, exp, count * esize) == 0)
        return -1;
    const unsigned char *g = got, *e = exp;
    for (size_t i = 0; i < count; i++)
        if (memcmp(g + i * esize, e + i * esize, esize) != 0)
            return (long)i;
    return -1;
}

void rc_format_elem(char *out, size_t len, const void *buf, size_t i, HcclDataType t)
{
    const unsigned char *p = (const unsigned char *)buf + i * rc_esize(t);
    switch (t) {
    case HCCL_DATA_TYPE_INT8: snprintf(out, len, "%d", *(const int8_t *)p); break;
    case HCCL_DATA_TYPE_UINT8:
    case HCCL_DATA_TYPE_FP8E4M3:
    case HCCL_DATA_TYPE_FP8E5M2: snprintf(out, len, "0x%02x", *p); break;
    case HCCL_DATA_TYPE_INT16: {
        int16_t v; memcpy(&v, p, 2); snprintf(out, len, "%d", v); break;
    }
    case HCCL_DATA_TYPE_UINT16: {
        uint16_t v; memcpy(&v, p, 2); snprintf(out, len, "%u", v); break;
    }
    case HCCL_DATA_TYPE_INT32: {
        int32_t v; memcpy(&v, p, 4); snprintf(out, len, "%" PRId32, v); break;
    }
    case HCCL_DATA_TYPE_UINT32: {
        uint32_t v; memcpy(&v, p, 4); snprintf(out, len, "%" PRIu32, v); break;
    }
    case HCCL_DATA_TYPE_INT64: {
        int64_t v; memcpy(&v, p, 8); snprintf(out, len, "%" PRId64, v); break;
    }
    case HCCL_DATA_TYPE_UINT64: {
        uint64_t v; memcpy(&v, p, 8); snprintf(out, len, "%" PRIu64, v); break;
    }
    case HCCL_DATA_TYPE_FP16: {
        uint16_t v; memcpy(&v, p, 2);
        snprintf(out, len, "0x%04x(%.9g)", v, (double)rc_fp16_to_float(v)); break;
    }
    case HCCL_DATA_TYPE_BFP16: {
        uint16_t v; memcpy(&v, p, 2);
        snprintf(out, len, "0x%04x(%.9g)", v, (double)rc_bf16_to_float(v)); break;
    }
    case HCCL_DATA_TYPE_FP32: {
        float v; uint32_t u; memcpy(&v, p, 4); memcpy(&u, p, 4);
        snprintf(out, len, "0x%08" PRIx32 "(%.9g)", u, (double)v); break;
    }
    case HCCL_DATA_TYPE_FP64: {
        double v; uint64_t u; memcpy(&v, p, 8); memcpy(&u, p, 8);
        snprintf(out, len, "0x%016" PRIx64 "(%.17g)", u, v); break;
    }
    case HCCL_DATA_TYPE_INT128: {
        uint64_t lo, hi; memcpy(&lo, p, 8); memcpy(&hi, p + 8, 8);
        snprintf(out, len, "0x%016" PRIx64 "%016" PRIx64, hi, lo); break;
    }
    default:
        snprintf(out, len, "?");
    }
}

uint64_t rc_hash_bytes(const void *p, size_t n, uint64_t h)
{
    const unsigned char *c = p;
    if (h == 0)
        h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) {
        h ^= c[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

int rc_same_on_all(uint64_t v, MPI_Comm comm)
{
    uint64_t in[2] = {v, ~v}, out[2];
    MPI_Allreduce(in, out, 2, MPI_UINT64_T, MPI_MAX, comm);
    int same = out[0] == v && out[1] == ~v, all;
    MPI_Allreduce(&same, &all, 1, MPI_INT, MPI_MIN, comm);
    return all;
}
