/*
 * tools/stats.h - the order statistics the benchmark tools share: a
 * comparator for qsort over doubles and the p-th percentile (nearest rank,
 * p in [0, 1]) of n >= 1 values, sorting them first (hc_pct) or already
 * sorted (hc_pct_sorted).
 */
#ifndef HC_TOOLS_STATS_H_
#define HC_TOOLS_STATS_H_

#include <stdlib.h>

static inline int hc_cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static inline double hc_pct_sorted(const double *v, int n, double p)
{
    return v[(int)(p * (n - 1) + 0.5)];
}

static inline double hc_pct(double *v, int n, double p)
{
    qsort(v, (size_t)n, sizeof(*v), hc_cmp_double);
    return hc_pct_sorted(v, n, p);
}

#endif /* HC_TOOLS_STATS_H_ */
