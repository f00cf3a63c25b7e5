/*
 * test/unit/check_layout.c - the public structures have HCCL's layout, so
 * that a program built against HCCL's headers passes structures that
 * hcomm reads right.
 *
 * The numbers are HCCL's, for x86-64 and AArch64 Linux (LP64): HcclCommConfig
 * of configuration version 10 as declared in HCCL's hccl_types.h (the copy
 * torch_npu ships in third_party/hccl/inc/hccl/, and the open hcomm
 * repository's include/hccl/hccl_types.h before it added
 * hcclSymWinMaxMemSizePerRank), worked out field by field from C's layout
 * rules: 24 header bytes, uint32 x2, char[128] x2, uint32 x4, uint64 (8-aligned
 * at 304), uint8 at 312, int32 (4-aligned: 316), char[1600] + char[50] +
 * char[128] + char[128], uint32 (4-aligned: 2228), total rounded to 8: 2232.
 */
#include <check.h>
#include <stddef.h>
#include <stdlib.h>

#include <hccl/hccl.h>

#define FIELD(f, off, size) \
    do { \
        ck_assert_uint_eq(offsetof(HcclCommConfig, f), off); \
        ck_assert_uint_eq(sizeof(((HcclCommConfig *)0)->f), size); \
    } while (0)

START_TEST(test_comm_config)
{
    FIELD(reserved, 0, 24);
    FIELD(hcclBufferSize, 24, 4);
    FIELD(hcclDeterministic, 28, 4);
    FIELD(hcclCommName, 32, 128);
    FIELD(hcclUdi, 160, 128);
    FIELD(hcclOpExpansionMode, 288, 4);
    FIELD(hcclRdmaTrafficClass, 292, 4);
    FIELD(hcclRdmaServiceLevel, 296, 4);
    FIELD(hcclWorldRankID, 300, 4);
    FIELD(hcclJobID, 304, 8);
    FIELD(aclGraphZeroCopyEnable, 312, 1);
    FIELD(hcclExecTimeOut, 316, 4);
    FIELD(hcclAlgo, 320, 1600);
    FIELD(hcclRetryEnable, 1920, 50);
    FIELD(hcclRetryParams, 1970, 128);
    FIELD(hcclBufferName, 2098, 128);
    FIELD(hcclQos, 2228, 4);
    ck_assert_uint_eq(sizeof(HcclCommConfig), 2232);
    ck_assert_uint_eq(HCCL_COMM_CONFIG_MAGIC_WORD, 0xf0f0f0f0u);
    ck_assert_uint_eq(HCCL_COMM_CONFIG_VERSION, 10);
}
END_TEST

START_TEST(test_other_types)
{
    /* HcclSendRecvItem: enum, pointer, uint64, enum, uint32 */
    ck_assert_uint_eq(offsetof(HcclSendRecvItem, sendRecvType), 0);
    ck_assert_uint_eq(offsetof(HcclSendRecvItem, buf), 8);
    ck_assert_uint_eq(offsetof(HcclSendRecvItem, count), 16);
    ck_assert_uint_eq(offsetof(HcclSendRecvItem, dataType), 24);
    ck_assert_uint_eq(offsetof(HcclSendRecvItem, remoteRank), 28);
    ck_assert_uint_eq(sizeof(HcclSendRecvItem), 32);
    ck_assert_uint_eq(sizeof(HcclRootInfo), 4108);
    ck_assert_uint_eq(sizeof(HcclConfigValue), 4);
    /* enum values programs pass by number */
    ck_assert_int_eq(HCCL_DATA_TYPE_HIF8, 14);
    ck_assert_int_eq(HCCL_DATA_TYPE_FP8E4M3, 15);
    ck_assert_int_eq(HCCL_DATA_TYPE_FP8E5M2, 16);
    ck_assert_int_eq(HCCL_DATA_TYPE_FP8E8M0, 17);
    ck_assert_int_eq(HCCL_COMM_CONFIG_BUFFER_NAME, 11);
    ck_assert_int_eq(HCCL_COMM_CONFIG_RESERVED, 12);
    ck_assert_int_eq(HCCL_CMD_ALLGATHER_V, 16);
    ck_assert_int_eq(HCCL_CMD_REDUCE_SCATTER_V, 17);
    ck_assert_int_eq(HCCL_CMD_HALF_ALLTOALLV, 20);
    ck_assert_int_eq(HCCL_CMD_BARRIER, 103);
    ck_assert_int_eq(HCCL_COMM_STATUS_SUSPENDING, 1);
    ck_assert_int_eq(HCCL_COMM_STATUS_INVALID, 254);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("layout");
    TCase *tc = tcase_create("layout");
    tcase_add_test(tc, test_comm_config);
    tcase_add_test(tc, test_other_types);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
