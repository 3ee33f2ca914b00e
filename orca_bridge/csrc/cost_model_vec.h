// CCostModelVec: ORCA's GPDB cost model with vexec's vector factors.
//
// Every physical operator is priced as ORCA's formula says; the operator's
// own share of that cost (its total minus its children's) is then scaled by
// vexec's factor for the operator's kind, in proportion to how much of its
// scalar work vexec has kernels for. Row/batch conversions at the edges
// between vector and row operators cost `handoff` times ORCA's per-tuple
// processing cost of the rows that cross.
//
// Two invariants (checked by the crate's tests on ORCA's minidumps):
// - all factors 1: the cost is ORCA's, bit for bit, so the plans are ORCA's;
// - an operator never costs less than its children: partial plans stay
//   lower bounds, which ORCA's branch-and-bound pruning relies on.
#ifndef ORCA_BRIDGE_COST_MODEL_VEC_H
#define ORCA_BRIDGE_COST_MODEL_VEC_H

#include <set>

#include "gpdbcost/CCostModelGPDB.h"
#include "orca_bridge.h"

namespace orca_bridge
{
class CCostModelVec : public gpdbcost::CCostModelGPDB
{
public:
	CCostModelVec(gpos::CMemoryPool *mp, gpos::ULONG segments,
				  gpopt::CCostModelParamsGPDB *params,
				  const OrcaVecFactors &factors,
				  const std::set<::OID> &kernel_oids);

	virtual gpopt::CCost Cost(gpopt::CExpressionHandle &exprhdl,
							  const SCostingInfo *pci) const;

	// The factor of an operator kind; 1 for operators vexec runs on rows.
	double Factor(gpopt::COperator::EOperatorId op) const;

	// The share of an operator's scalar work vexec has kernels for (0..1).
	double KernelShare(gpopt::CExpressionHandle &exprhdl) const;

private:
	OrcaVecFactors m_factors;
	std::set<::OID> m_kernel_oids;
};
}  // namespace orca_bridge

#endif
