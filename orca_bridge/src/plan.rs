//! A plan in DXL as a tree of physical operators, and the features of its
//! shape that the corpus reports compare (join order, join methods,
//! aggregation stages). Pure: plain `cargo test` covers it.

use crate::OrcaError;

/// The namespace ORCA's DXL uses; the shim's plan text has no document
/// header, so the parser is given the declaration.
const DXL_NS: &str = "http://greenplum.com/dxl/2010/12/";

#[derive(Debug, Clone, PartialEq)]
pub struct PlanNode {
    /// The DXL element name: TableScan, HashJoin, Aggregate, Sort, ...
    pub operator: String,
    /// What distinguishes operators of one name: a join's JoinType, an
    /// aggregate's AggregationStrategy, a scan's table.
    pub detail: Option<String>,
    pub startup_cost: f64,
    pub total_cost: f64,
    pub rows: f64,
    pub width: f64,
    pub children: Vec<PlanNode>,
}

/// Parses the plan text the shim returns (a `dxl:Plan` element).
pub fn parse(dxl: &str) -> Result<PlanNode, OrcaError> {
    let text = format!("<Root xmlns:dxl=\"{DXL_NS}\">{dxl}</Root>");
    let doc = roxmltree::Document::parse(&text).map_err(|e| OrcaError(format!("plan DXL: {e}")))?;
    let plan = doc
        .root_element()
        .children()
        .find(|n| n.is_element() && n.tag_name().name() == "Plan")
        .ok_or_else(|| OrcaError("plan DXL has no Plan element".into()))?;
    let mut roots = operators_below(plan);
    match roots.len() {
        1 => Ok(roots.remove(0)),
        n => Err(OrcaError(format!("plan DXL has {n} root operators"))),
    }
}

/// An operator element is one with a `Properties/Cost` child.
fn operator(node: roxmltree::Node) -> Option<PlanNode> {
    if !node.is_element() {
        return None;
    }
    let cost = node
        .children()
        .find(|c| c.is_element() && c.tag_name().name() == "Properties")?
        .children()
        .find(|c| c.is_element() && c.tag_name().name() == "Cost")?;
    let num = |name: &str| cost.attribute(name).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    let name = node.tag_name().name().to_string();
    let detail = node
        .attribute("JoinType")
        .or_else(|| node.attribute("AggregationStrategy"))
        .map(str::to_string)
        .or_else(|| table_name(node));
    Some(PlanNode {
        operator: name,
        detail,
        startup_cost: num("StartupCost"),
        total_cost: num("TotalCost"),
        rows: num("Rows"),
        width: num("Width"),
        children: operators_below(node),
    })
}

/// The operators under `node`: its operator children, and the first
/// operators inside its other elements (a SubPlan in a Filter, say).
fn operators_below(node: roxmltree::Node) -> Vec<PlanNode> {
    node.children()
        .filter(|c| c.is_element() && c.tag_name().name() != "Properties")
        .flat_map(|c| match operator(c) {
            Some(op) => vec![op],
            None => operators_below(c),
        })
        .collect()
}

fn table_name(node: roxmltree::Node) -> Option<String> {
    node.children()
        .find(|c| c.is_element() && c.tag_name().name() == "TableDescriptor")
        .and_then(|t| t.attribute("TableName"))
        .map(str::to_string)
}

impl PlanNode {
    /// The nodes in pre-order.
    pub fn walk(&self) -> Vec<&PlanNode> {
        let mut out = vec![self];
        for c in &self.children {
            out.extend(c.walk());
        }
        out
    }

    /// The tables in the order the plan's leaves read them.
    pub fn join_order(&self) -> Vec<String> {
        self.walk()
            .into_iter()
            .filter(|n| n.children.is_empty() || n.operator.ends_with("Scan"))
            .filter_map(|n| if n.operator.contains("Scan") { n.detail.clone() } else { None })
            .collect()
    }

    /// The join operators, in pre-order (HashJoin, NestedLoopJoin,
    /// MergeJoin, IndexNestedLoopJoin ...).
    pub fn join_methods(&self) -> Vec<String> {
        self.walk().into_iter().filter(|n| n.operator.contains("Join")).map(|n| n.operator.clone()).collect()
    }

    /// How many aggregation operators are stacked (1 = one-stage).
    pub fn aggregate_stages(&self) -> usize {
        self.walk().into_iter().filter(|n| n.operator == "Aggregate").count()
    }

    /// The plan's operators as one line: `Op[detail](child, child)`.
    pub fn shape(&self) -> String {
        let mut s = self.operator.clone();
        if let Some(d) = &self.detail {
            s.push('[');
            s.push_str(d);
            s.push(']');
        }
        if !self.children.is_empty() {
            let kids: Vec<String> = self.children.iter().map(PlanNode::shape).collect();
            s.push('(');
            s.push_str(&kids.join(", "));
            s.push(')');
        }
        s
    }
}

/// How two plans of one query differ, in the terms of the corpus report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PlanChange {
    pub any: bool,
    pub join_order: bool,
    pub join_method: bool,
    pub aggregate_stages: bool,
}

pub fn compare(a: &PlanNode, b: &PlanNode) -> PlanChange {
    PlanChange {
        any: a.shape() != b.shape(),
        join_order: a.join_order() != b.join_order(),
        join_method: a.join_methods() != b.join_methods(),
        aggregate_stages: a.aggregate_stages() != b.aggregate_stages(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The shape of ORCA's plan text (abridged from a minidump's plan).
    const PLAN: &str = r#"<dxl:Plan Id="0" SpaceSize="0">
  <dxl:GatherMotion InputSegments="0,1" OutputSegments="-1">
    <dxl:Properties><dxl:Cost StartupCost="0" TotalCost="862.001" Rows="1.000000" Width="16"/></dxl:Properties>
    <dxl:ProjList/>
    <dxl:HashJoin JoinType="Inner">
      <dxl:Properties><dxl:Cost StartupCost="0" TotalCost="862.000" Rows="1.000000" Width="16"/></dxl:Properties>
      <dxl:TableScan>
        <dxl:Properties><dxl:Cost StartupCost="0" TotalCost="431.000" Rows="1.000000" Width="8"/></dxl:Properties>
        <dxl:TableDescriptor Mdid="0.1.1.0" TableName="t1"/>
      </dxl:TableScan>
      <dxl:Aggregate AggregationStrategy="Hashed">
        <dxl:Properties><dxl:Cost StartupCost="0" TotalCost="431.000" Rows="1.000000" Width="8"/></dxl:Properties>
        <dxl:TableScan>
          <dxl:Properties><dxl:Cost StartupCost="0" TotalCost="431.000" Rows="1.000000" Width="8"/></dxl:Properties>
          <dxl:TableDescriptor Mdid="0.2.1.0" TableName="t2"/>
        </dxl:TableScan>
      </dxl:Aggregate>
    </dxl:HashJoin>
  </dxl:GatherMotion>
</dxl:Plan>"#;

    #[test]
    fn parses_operators_costs_and_shape() {
        let p = parse(PLAN).unwrap();
        assert_eq!(p.operator, "GatherMotion");
        assert_eq!(p.total_cost, 862.001);
        assert_eq!(p.width, 16.0);
        assert_eq!(
            p.shape(),
            "GatherMotion(HashJoin[Inner](TableScan[t1], Aggregate[Hashed](TableScan[t2])))"
        );
        assert_eq!(p.join_order(), vec!["t1", "t2"]);
        assert_eq!(p.join_methods(), vec!["HashJoin"]);
        assert_eq!(p.aggregate_stages(), 1);
    }

    #[test]
    fn compares_plans() {
        let a = parse(PLAN).unwrap();
        let swapped =
            PLAN.replace("\"t1\"", "\"tx\"").replace("\"t2\"", "\"t1\"").replace("\"tx\"", "\"t2\"");
        let b = parse(&swapped).unwrap();
        let c = compare(&a, &b);
        assert!(c.any && c.join_order && !c.join_method && !c.aggregate_stages);
        assert_eq!(compare(&a, &a), PlanChange::default());
        let nl = parse(&PLAN.replace("dxl:HashJoin", "dxl:NestedLoopJoin")).unwrap();
        assert!(compare(&a, &nl).join_method);
    }

    #[test]
    fn finds_operators_inside_scalar_expressions() {
        let with_subplan = PLAN.replace(
            "<dxl:ProjList/>",
            r#"<dxl:Filter><dxl:SubPlan><dxl:Result><dxl:Properties><dxl:Cost StartupCost="0" TotalCost="1" Rows="1" Width="1"/></dxl:Properties></dxl:Result></dxl:SubPlan></dxl:Filter>"#,
        );
        let p = parse(&with_subplan).unwrap();
        assert_eq!(p.children.len(), 2);
        assert_eq!(p.children[0].operator, "Result");
    }

    #[test]
    fn rejects_text_that_is_not_a_plan() {
        assert!(parse("<dxl:Query/>").is_err());
        assert!(parse("<dxl:Plan").is_err());
    }
}
