// The shim: ORCA behind a C API (orca_bridge.h).
//
// ORCA code must run inside a GPOS task (gpos_exec gives the calling thread
// a worker, a memory pool and a logger); each entry point runs its work as
// one task and turns every exception into an error message. Nothing here
// calls PostgreSQL.
#include "orca_bridge.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cwchar>
#include <exception>
#include <mutex>
#include <set>
#include <string>

#include "cost_model_vec.h"
#include "gpdbcost/CCostModelGPDB.h"
#include "gpopt/engine/CEnumeratorConfig.h"
#include "gpopt/init.h"
#include "gpopt/mdcache/CMDAccessor.h"
#include "gpopt/mdcache/CMDCache.h"
#include "gpopt/minidump/CDXLMinidump.h"
#include "gpopt/minidump/CMinidumperUtils.h"
#include "gpopt/optimizer/COptimizerConfig.h"
#include "gpopt/version.h"
#include "gpos/_api.h"
#include "gpos/base.h"
#include "gpos/common/CBitSet.h"
#include "gpos/error/CErrorContext.h"
#include "gpos/io/COstreamString.h"
#include "gpos/memory/CAutoMemoryPool.h"
#include "gpos/string/CWStringDynamic.h"
#include "gpos/task/CAutoTraceFlag.h"
#include "gpos/task/ITask.h"
#include "naucrates/dxl/CDXLUtils.h"
#include "naucrates/init.h"
#include "naucrates/md/CMDProviderMemory.h"
#include "naucrates/traceflags/traceflags.h"

using namespace gpos;
using namespace gpopt;
using namespace gpdxl;
using namespace gpmd;

namespace
{
// ORCA's trace output of one call (statistics, timers), in wide characters.
const int kLogChars = 1 << 20;

void
CopyError(char *err, size_t errlen, const std::string &msg)
{
	if (NULL == err || 0 == errlen)
	{
		return;
	}
	size_t n = std::min(msg.size(), errlen - 1);
	memcpy(err, msg.data(), n);
	err[n] = '\0';
}

std::string
Narrow(const WCHAR *w)
{
	if (NULL == w)
	{
		return std::string();
	}
	std::string out;
	for (; *w; w++)
	{
		// DXL and ORCA's messages are ASCII apart from names; anything else
		// is written as a code point, so nothing is lost silently.
		if (*w < 0x80)
		{
			out.push_back((char) *w);
		}
		else
		{
			char buf[16];
			snprintf(buf, sizeof buf, "\\u{%x}", (unsigned) *w);
			out += buf;
		}
	}
	return out;
}

char *
Dup(const std::string &s)
{
	char *p = (char *) malloc(s.size() + 1);
	if (NULL != p)
	{
		memcpy(p, s.c_str(), s.size() + 1);
	}
	return p;
}

// The message of the exception being handled, as ORCA formats it.
std::string
OrcaMessage(const CException &ex)
{
	std::string msg = Narrow(ITask::Self()->GetErrCtxt()->GetErrorMsg());
	char where[256];
	snprintf(where, sizeof where, " (ORCA exception %u.%u at %s:%u)",
			 ex.Major(), ex.Minor(), ex.Filename() ? ex.Filename() : "?",
			 ex.Line());
	return (msg.empty() ? std::string("ORCA error") : msg) + where;
}

// Runs `fn(arg)` as a GPOS task; on failure fills `err`. The task's trace
// output goes to `log` when given.
struct TaskCall
{
	void *(*fn)(void *);
	void *arg;
	std::string error;	// set by fn on an ORCA error
	std::string log;
};

int
RunTask(TaskCall *call, bool keep_log, char *err, size_t errlen)
{
	WCHAR *logbuf = NULL;
	if (keep_log)
	{
		logbuf = (WCHAR *) calloc(kLogChars, sizeof(WCHAR));
		if (NULL == logbuf)
		{
			CopyError(err, errlen, "out of memory for ORCA's log");
			return 1;
		}
	}
	gpos_exec_params params;
	params.func = call->fn;
	params.arg = call;
	params.result = NULL;
	params.stack_start = &params;
	params.error_buffer = (char *) logbuf;
	params.error_buffer_size = keep_log ? kLogChars * (int) sizeof(WCHAR) : -1;
	params.abort_requested = NULL;

	int rc = 1;
	try
	{
		rc = gpos_exec(&params);
		if (0 != rc && call->error.empty())
		{
			call->error = "ORCA's task failed";
		}
	}
	catch (CException &ex)
	{
		char buf[256];
		snprintf(buf, sizeof buf, "ORCA exception %u.%u at %s:%u",
				 ex.Major(), ex.Minor(), ex.Filename() ? ex.Filename() : "?",
				 ex.Line());
		call->error = buf;
		rc = 1;
	}
	catch (std::exception &ex)
	{
		call->error = std::string("C++ exception in ORCA: ") + ex.what();
		rc = 1;
	}
	catch (...)
	{
		call->error = "unknown C++ exception in ORCA";
		rc = 1;
	}
	if (keep_log)
	{
		call->log = Narrow(logbuf);
		free(logbuf);
	}
	if (!call->error.empty())
	{
		CopyError(err, errlen, call->error);
		return 1;
	}
	return rc;
}

void *
InitTask(void *arg)
{
	TaskCall *call = (TaskCall *) arg;
	GPOS_TRY
	{
		InitDXL();
		CMDCache::Init();
	}
	GPOS_CATCH_EX(ex)
	{
		call->error = OrcaMessage(ex);
		GPOS_RESET_EX;
	}
	GPOS_CATCH_END;
	return NULL;
}

// The flags orca_set_abort_flags names; ORCA's abort callback reads them.
const volatile int *abort_cancel = NULL;
const volatile int *abort_die = NULL;

bool
AbortRequested()
{
	return (NULL != abort_cancel && 0 != *abort_cancel) ||
		   (NULL != abort_die && 0 != *abort_die);
}

std::once_flag init_once;
int init_rc = 1;
std::string init_error;

// Serializes a plan as ORCA's harness compares it.
std::string
SerializePlan(CMemoryPool *mp, const CDXLNode *plan)
{
	CWStringDynamic str(mp);
	COstreamString os(&str);
	CDXLUtils::SerializePlan(mp, os, plan, 0 /*plan_id*/,
							 0 /*plan_space_size*/,
							 false /*serialize_document_header_footer*/,
							 true /*indentation*/);
	return Narrow(str.GetBuffer());
}

struct MinidumpCall
{
	const char *path;
	const OrcaOptions *opts;
	OrcaResult *out;
};

// The configuration to optimize with: the minidump's own, or the same with
// ORCA's calibrated GPDB model or CCostModelVec in place of its cost model.
COptimizerConfig *
MakeConfig(CMemoryPool *mp, CDXLMinidump *md, const OrcaOptions *opts)
{
	COptimizerConfig *dumped = md->GetOptimizerConfig();
	COptimizerConfig *config = NULL;
	if (NULL == dumped)
	{
		config = COptimizerConfig::PoconfDefault(mp);
	}
	else
	{
		dumped->AddRef();
		config = dumped;
	}
	if (ORCA_COST_MINIDUMP == opts->cost_model)
	{
		return config;
	}

	// The dump's GPDB parameters, or ORCA's defaults when the dump was
	// taken with the legacy model (which has other parameters).
	ICostModel *dumped_model = config->GetCostModel();
	ULONG segments = dumped_model->UlHosts();
	CCostModelParamsGPDB *params =
		dynamic_cast<CCostModelParamsGPDB *>(dumped_model->GetCostModelParams());
	if (NULL == params)
	{
		params = GPOS_NEW(mp) CCostModelParamsGPDB(mp);
	}
	else
	{
		params->AddRef();
	}
	ICostModel *model = NULL;
	if (ORCA_COST_VEC == opts->cost_model)
	{
		std::set<OID> kernels(opts->kernel_oids,
							  opts->kernel_oids + opts->n_kernel_oids);
		model = GPOS_NEW(mp) orca_bridge::CCostModelVec(mp, segments, params,
														opts->vec, kernels);
	}
	else
	{
		model = GPOS_NEW(mp) gpdbcost::CCostModelGPDB(mp, segments, params);
	}

	config->GetEnumeratorCfg()->AddRef();
	config->GetStatsConf()->AddRef();
	config->GetCteConf()->AddRef();
	config->GetHint()->AddRef();
	config->GetWindowOids()->AddRef();
	COptimizerConfig *swapped = GPOS_NEW(mp) COptimizerConfig(
		config->GetEnumeratorCfg(), config->GetStatsConf(),
		config->GetCteConf(), model, config->GetHint(), config->GetWindowOids());
	config->Release();
	return swapped;
}

void *
MinidumpTask(void *arg)
{
	TaskCall *call = (TaskCall *) arg;
	MinidumpCall *mc = (MinidumpCall *) call->arg;
	GPOS_TRY
	{
		CAutoMemoryPool amp;
		CMemoryPool *mp = amp.Pmp();

		// The trace flags of ORCA's minidump harness
		// (CTestUtils::EresUnittest_RunTests).
		CAutoTraceFlag redistribute(
			EopttraceEnableRedistributeBroadcastHashJoin, true);
		CAutoTraceFlag enumerate(EopttraceEnumeratePlans, true);
		CAutoTraceFlag dpe_stats(EopttraceDeriveStatsForDPE, true);
		CAutoTraceFlag mdqa(EopttraceForceExpandedMDQAs, true);
		CAutoTraceFlag pruning(EopttraceEnableSpacePruning,
							   0 != mc->opts->space_pruning);
		CAutoTraceFlag stats(EopttracePrintOptimizationStatistics, true);

		CMDCache::Reset();
		CDXLMinidump *md = CMinidumperUtils::PdxlmdLoad(mp, mc->path);
		// Dumps taken with minidumps on would write a new one per run (into
		// the working directory): the bridge never writes files.
		if (NULL != md->Pbs())
		{
			(void) const_cast<CBitSet *>(md->Pbs())
				->ExchangeClear(EopttraceMinidump);
		}
		CMDProviderMemory *provider =
			GPOS_NEW(mp) CMDProviderMemory(mp, mc->path);
		const CSystemIdArray *sysids = md->GetSysidPtrArray();
		CMDProviderArray *providers = GPOS_NEW(mp) CMDProviderArray(mp);
		providers->Append(provider);
		for (ULONG i = 1; i < sysids->Size(); i++)
		{
			provider->AddRef();
			providers->Append(provider);
		}

		COptimizerConfig *config = MakeConfig(mp, md, mc->opts);
		// As the harness: an out-of-range plan id is an error, not a retry.
		config->GetEnumeratorCfg()->SetSampleValidPlans(false);
		ULONG segments = 2;	 // the harness's GPOPT_TEST_SEGMENTS
		if (NULL != config->GetCostModel() &&
			config->GetCostModel()->UlHosts() > segments)
		{
			segments = config->GetCostModel()->UlHosts();
		}

		CDXLNode *plan = NULL;
		{
			CMDAccessor mda(mp, CMDCache::Pcache(), sysids, providers);
			auto t0 = std::chrono::steady_clock::now();
			plan = CMinidumperUtils::PdxlnExecuteMinidump(
				mp, &mda, md, mc->path, segments, 1 /*session*/, 1 /*command*/,
				config, NULL /*no constant evaluator*/);
			auto t1 = std::chrono::steady_clock::now();
			mc->out->optimize_ms =
				std::chrono::duration<double, std::milli>(t1 - t0).count();

			mc->out->plan_dxl = Dup(SerializePlan(mp, plan));
			if (NULL != md->PdxlnPlan())
			{
				mc->out->expected_dxl = Dup(SerializePlan(mp, md->PdxlnPlan()));
			}
			mc->out->plan_id = config->GetEnumeratorCfg()->GetPlanId();
			mc->out->plan_space_size =
				config->GetEnumeratorCfg()->GetPlanSpaceSize();
			mc->out->expected_plan_id = md->GetPlanId();
			mc->out->expected_plan_space_size = md->GetPlanSpaceSize();
		}

		plan->Release();
		config->Release();
		providers->Release();
		GPOS_DELETE(md);
	}
	GPOS_CATCH_EX(ex)
	{
		call->error = OrcaMessage(ex);
		GPOS_RESET_EX;
	}
	GPOS_CATCH_END;
	return NULL;
}
}  // namespace

extern "C" void
orca_set_abort_flags(const volatile int *cancel, const volatile int *die)
{
	abort_cancel = cancel;
	abort_die = die;
}

extern "C" int
orca_init(char *err, size_t errlen)
{
	try
	{
		std::call_once(init_once, [] {
			struct gpos_init_params gpos_params = {AbortRequested};
			gpos_init(&gpos_params);
			gpdxl_init();
			gpopt_init();
			TaskCall call = {InitTask, NULL, std::string(), std::string()};
			char buf[512];
			init_rc = RunTask(&call, false, buf, sizeof buf);
			if (0 != init_rc)
			{
				init_error = buf;
			}
		});
	}
	catch (...)
	{
		CopyError(err, errlen, "unknown C++ exception initializing ORCA");
		return 1;
	}
	if (0 != init_rc)
	{
		CopyError(err, errlen, "initializing ORCA failed: " + init_error);
	}
	return init_rc;
}

extern "C" const char *
orca_version(void)
{
	return GPORCA_VERSION_STRING;
}

extern "C" int
orca_optimize_minidump(const char *path, const OrcaOptions *opts,
					   OrcaResult *out, char *err, size_t errlen)
{
	if (NULL == path || NULL == opts || NULL == out)
	{
		CopyError(err, errlen, "orca_optimize_minidump: NULL argument");
		return 1;
	}
	memset(out, 0, sizeof *out);
	if (0 != orca_init(err, errlen))
	{
		return 1;
	}
	MinidumpCall mc = {path, opts, out};
	TaskCall call = {MinidumpTask, &mc, std::string(), std::string()};
	int rc = RunTask(&call, true, err, errlen);
	out->log = Dup(call.log);
	if (0 != rc)
	{
		free(out->plan_dxl);
		free(out->expected_dxl);
		out->plan_dxl = NULL;
		out->expected_dxl = NULL;
	}
	return rc;
}

extern "C" void
orca_result_free(OrcaResult *r)
{
	if (NULL == r)
	{
		return;
	}
	free(r->plan_dxl);
	free(r->expected_dxl);
	free(r->log);
	memset(r, 0, sizeof *r);
}
