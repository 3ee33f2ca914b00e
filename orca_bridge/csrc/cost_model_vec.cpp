// CCostModelVec (see cost_model_vec.h).
#include "cost_model_vec.h"

#include <algorithm>

#include "gpopt/base/COptCtxt.h"
#include "gpopt/base/CUtils.h"
#include "gpopt/mdcache/CMDAccessor.h"
#include "gpopt/operators/CExpression.h"
#include "gpopt/operators/CExpressionHandle.h"
#include "gpopt/operators/CScalarCmp.h"
#include "gpopt/operators/CScalarFunc.h"
#include "gpopt/operators/CScalarOp.h"
#include "gpdbcost/CCostModelParamsGPDB.h"
#include "naucrates/md/CMDIdGPDB.h"
#include "naucrates/md/IMDScalarOp.h"

using namespace gpos;
using namespace gpopt;
using namespace gpmd;

namespace orca_bridge
{
CCostModelVec::CCostModelVec(CMemoryPool *mp, ULONG segments,
							 gpopt::CCostModelParamsGPDB *params,
							 const OrcaVecFactors &factors,
							 const std::set<OID> &kernel_oids)
	: CCostModelGPDB(mp, segments, params),
	  m_factors(factors),
	  m_kernel_oids(kernel_oids)
{
	// A factor below 0 would make work cost less than nothing, and a
	// conversion cheaper than none would let a plan cost less than its
	// parts: both would break ORCA's lower bounds.
	double *own[] = {&m_factors.scan, &m_factors.filter, &m_factors.agg,
					 &m_factors.hash_join, &m_factors.sort};
	for (double *f : own)
	{
		*f = std::max(*f, 0.0);
	}
	m_factors.handoff = std::max(m_factors.handoff, 1.0);
}

// The kind of batch operator vexec has for `op` (Row: none, a row operator).
enum class VecKind
{
	Row,
	Scan,
	Filter,
	Agg,
	HashJoin,
	Sort
};

static VecKind
KindOf(COperator::EOperatorId op)
{
	switch (op)
	{
		case COperator::EopPhysicalTableScan:
		case COperator::EopPhysicalDynamicTableScan:
			return VecKind::Scan;
		case COperator::EopPhysicalFilter:
		case COperator::EopPhysicalComputeScalar:
			return VecKind::Filter;
		case COperator::EopPhysicalHashAgg:
		case COperator::EopPhysicalHashAggDeduplicate:
		case COperator::EopPhysicalScalarAgg:
			return VecKind::Agg;
		case COperator::EopPhysicalInnerHashJoin:
		case COperator::EopPhysicalLeftOuterHashJoin:
		case COperator::EopPhysicalLeftSemiHashJoin:
		case COperator::EopPhysicalLeftAntiSemiHashJoin:
		case COperator::EopPhysicalLeftAntiSemiHashJoinNotIn:
			return VecKind::HashJoin;
		case COperator::EopPhysicalSort:
			return VecKind::Sort;
		default:
			return VecKind::Row;
	}
}

static bool
IsVectorOperator(COperator::EOperatorId op)
{
	return VecKind::Row != KindOf(op);
}

double
CCostModelVec::Factor(COperator::EOperatorId op) const
{
	switch (KindOf(op))
	{
		case VecKind::Scan:
			return m_factors.scan;
		case VecKind::Filter:
			return m_factors.filter;
		case VecKind::Agg:
			return m_factors.agg;
		case VecKind::HashJoin:
			return m_factors.hash_join;
		case VecKind::Sort:
			return m_factors.sort;
		case VecKind::Row:
			break;
	}
	return 1.0;
}

// The function an operator calls (vexec binds kernels by function OID).
static IMDId *
FunctionOfOperator(IMDId *op)
{
	if (NULL == op || !op->IsValid())
	{
		return NULL;
	}
	CMDAccessor *mda = COptCtxt::PoctxtFromTLS()->Pmda();
	return mda->RetrieveScOp(op)->FuncMdId();
}

// The OID of the function a scalar node calls; 0 for nodes that call none
// (column references, constants, AND/OR...) and for aggregates, which
// VecAgg runs whatever they are (natively or through fmgr); their
// arguments are counted.
static OID
CalledOid(COperator *pop)
{
	IMDId *mdid = NULL;
	switch (pop->Eopid())
	{
		case COperator::EopScalarFunc:
			mdid = CScalarFunc::PopConvert(pop)->FuncMdId();
			break;
		case COperator::EopScalarOp:
			mdid = FunctionOfOperator(CScalarOp::PopConvert(pop)->MdIdOp());
			break;
		case COperator::EopScalarCmp:
			mdid = FunctionOfOperator(CScalarCmp::PopConvert(pop)->MdIdOp());
			break;
		default:
			return 0;
	}
	if (NULL == mdid || IMDId::EmdidGPDB != mdid->MdidType())
	{
		return 0;
	}
	return CMDIdGPDB::CastMdid(mdid)->Oid();
}

// Counts the calls in a scalar tree and those vexec has kernels for.
static void
CountCalls(const CExpression *expr, const std::set<OID> &kernels,
		   ULONG *calls, ULONG *covered)
{
	if (NULL == expr)
	{
		return;
	}
	OID oid = CalledOid(expr->Pop());
	if (0 != oid)
	{
		(*calls)++;
		if (kernels.count(oid))
		{
			(*covered)++;
		}
	}
	for (ULONG i = 0; i < expr->Arity(); i++)
	{
		CountCalls((*expr)[i], kernels, calls, covered);
	}
}

double
CCostModelVec::KernelShare(CExpressionHandle &exprhdl) const
{
	ULONG calls = 0, covered = 0;
	for (ULONG i = 0; i < exprhdl.Arity(); i++)
	{
		if (exprhdl.FScalarChild(i))
		{
			CountCalls(exprhdl.PexprScalarRepChild(i), m_kernel_oids, &calls,
					   &covered);
		}
	}
	// No calls at all (column references only): the batch operator does
	// all of the work.
	return 0 == calls ? 1.0 : double(covered) / double(calls);
}

CCost
CCostModelVec::Cost(CExpressionHandle &exprhdl, const SCostingInfo *pci) const
{
	const double base = CCostModelGPDB::Cost(exprhdl, pci).Get();
	COperator::EOperatorId op = exprhdl.Pop()->Eopid();
	const bool vector_op = IsVectorOperator(op);

	double children = 0.0;
	for (ULONG i = 0; i < pci->ChildCount(); i++)
	{
		children += pci->PdCost()[i];
	}
	// The operator's own work. Operators ORCA prices by their most costly
	// child (not the sum) have none here; they keep ORCA's cost.
	const double own = std::max(base - children, 0.0);

	double cost = base;
	const double factor = Factor(op);
	if (vector_op && 1.0 != factor)
	{
		const double share = KernelShare(exprhdl);
		cost = base - (1.0 - factor) * share * own;
	}

	// Conversions where a batch operator meets a row operator. Children's
	// operators are known only when a whole plan is costed (not for
	// partial plans, whose cost must stay a lower bound: adding nothing
	// keeps it one).
	if (1.0 != m_factors.handoff)
	{
		const double unit =
			GetCostModelParams()
				->PcpLookup(gpopt::CCostModelParamsGPDB::
								EcpTupDefaultProcCostUnit)
				->Get()
				.Get();
		for (ULONG i = 0; i < pci->ChildCount(); i++)
		{
			COperator *child = exprhdl.Pop(i);
			if (NULL == child || !child->FPhysical())
			{
				continue;
			}
			if (IsVectorOperator(child->Eopid()) != vector_op)
			{
				cost += (m_factors.handoff - 1.0) * pci->PdRows()[i] *
						pci->GetWidth()[i] * unit;
			}
		}
	}
	return CCost(cost);
}
}  // namespace orca_bridge
