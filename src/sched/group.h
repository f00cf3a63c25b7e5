/*
 * src/sched/group.h - HcclGroupStart/End: calls queued on this thread until the
 * group ends, then run as one task (src/sched/group.c).
 */
#ifndef HC_GROUP_H_
#define HC_GROUP_H_

#include "src/comm/op.h"

/* Inside HcclGroupStart/End on this thread? */
int hc_group_active(void);
/* Queue a collective until HcclGroupEnd (stream: the call's stream; a
 * group runs on the stream its calls name, NULL = blocking). */
int hc_group_add_coll(hc_comm_t *c, const hc_op_t *op, void *stream);

#endif /* HC_GROUP_H_ */
