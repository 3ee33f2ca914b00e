//! pg_hba.conf, judged for a Flight SQL login as PostgreSQL judges a TCP
//! connection (hba.c's `check_hba`): the first line whose connection type,
//! database, role and address match decides the method.
//!
//! The rules come from the `pg_hba_file_rules` view (the file as the server
//! parses it), read by the listener; this module is the matching, free of
//! `pg_sys`. Why not hba.c itself: its parsed lines live under the
//! postmaster's memory context, which a background worker has already freed,
//! and `check_hba` is static.
//!
//! Not matched as PostgreSQL would, and therefore refused (never skipped): a
//! rule written with a regular expression (`/...`), a host name (which the
//! view does not resolve) or `samehost`/`samenet` (which need the server's
//! interfaces); a login that reaches such a line is rejected with a message
//! saying why.

use std::net::IpAddr;

/// One line of `pg_hba_file_rules`.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    pub line: i32,
    /// `host`, `hostssl`, `hostnossl`, `hostgssenc`, `hostnogssenc`, `local`.
    pub conn_type: String,
    pub databases: Vec<String>,
    pub roles: Vec<String>,
    /// An address, `all`, `samehost`, `samenet`, or a host name.
    pub address: Option<String>,
    pub netmask: Option<String>,
    pub method: String,
}

/// What the login brings.
pub struct Login<'a> {
    pub addr: IpAddr,
    pub tls: bool,
    pub database: &'a str,
    pub role: &'a str,
}

/// How a login is judged.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// The first matching line: its method (`trust`, `scram-sha-256`, ...).
    Method { line: i32, method: String },
    /// No line matched (PostgreSQL's implicit reject).
    NoEntry,
    /// A line this matcher cannot judge exactly was reached.
    Unsupported { line: i32, why: String },
}

/// What the matcher asks the server: whether `role` is a member of `group`
/// (for `+group` and `samerole`; false when either does not exist).
pub trait Facts {
    fn is_member(&mut self, role: &str, group: &str) -> bool;
}

/// Judge `login` against `rules`, in file order.
pub fn judge(rules: &[Rule], login: &Login, facts: &mut dyn Facts) -> Verdict {
    for r in rules {
        let type_ok = match r.conn_type.as_str() {
            "host" => true,
            "hostssl" => login.tls,
            "hostnossl" => !login.tls,
            // Flight SQL has no GSSAPI encryption.
            "hostnogssenc" => true,
            _ => false, // local, hostgssenc
        };
        if !type_ok {
            continue;
        }
        if let Some(why) = unsupported(r) {
            // Where PostgreSQL might match, refuse rather than guess.
            return Verdict::Unsupported { line: r.line, why };
        }
        if !address_matches(r, login.addr) {
            continue;
        }
        if !database_matches(&r.databases, login, facts) {
            continue;
        }
        if !role_matches(&r.roles, login.role, facts) {
            continue;
        }
        return Verdict::Method { line: r.line, method: r.method.clone() };
    }
    Verdict::NoEntry
}

fn unsupported(r: &Rule) -> Option<String> {
    if r.databases.iter().chain(&r.roles).any(|t| t.starts_with('/')) {
        return Some("regular expressions in pg_hba.conf are not supported by vexec_flight".into());
    }
    match r.address.as_deref() {
        None | Some("all") => None,
        Some(a @ ("samehost" | "samenet")) => {
            Some(format!("\"{a}\" in pg_hba.conf is not supported by vexec_flight"))
        }
        Some(a) if a.parse::<IpAddr>().is_ok() => None,
        Some(_) => Some("host names in pg_hba.conf are not supported by vexec_flight".into()),
    }
}

fn address_matches(r: &Rule, addr: IpAddr) -> bool {
    let addr = canonical(addr);
    match r.address.as_deref() {
        None | Some("all") => true,
        Some(a) => {
            let Ok(net) = a.parse::<IpAddr>() else { return false };
            let mask = match r.netmask.as_deref().and_then(|m| m.parse::<IpAddr>().ok()) {
                Some(m) => m,
                None => return false,
            };
            in_net(addr, canonical(net), canonical(mask))
        }
    }
}

/// An IPv4 client seen through an IPv6 socket (`::ffff:a.b.c.d`) is the IPv4
/// client (PostgreSQL converts the same way).
fn canonical(a: IpAddr) -> IpAddr {
    match a {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(a),
        v4 => v4,
    }
}

fn in_net(addr: IpAddr, net: IpAddr, mask: IpAddr) -> bool {
    match (addr, net, mask) {
        (IpAddr::V4(a), IpAddr::V4(n), IpAddr::V4(m)) => {
            let (a, n, m) = (u32::from(a), u32::from(n), u32::from(m));
            a & m == n & m
        }
        (IpAddr::V6(a), IpAddr::V6(n), IpAddr::V6(m)) => {
            let (a, n, m) = (u128::from(a), u128::from(n), u128::from(m));
            a & m == n & m
        }
        _ => false, // a rule of the other family (hba.c compares families first)
    }
}

fn database_matches(tokens: &[String], login: &Login, facts: &mut dyn Facts) -> bool {
    tokens.iter().any(|t| match t.as_str() {
        "all" => true,
        "sameuser" => login.database == login.role,
        "samerole" | "samegroup" => facts.is_member(login.role, login.database),
        // A Flight SQL session is never a replication connection.
        "replication" => false,
        name => name == login.database,
    })
}

fn role_matches(tokens: &[String], role: &str, facts: &mut dyn Facts) -> bool {
    tokens.iter().any(|t| match t.strip_prefix('+') {
        Some(group) => facts.is_member(role, group),
        None => t == "all" || t == role,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixed {
        members: Vec<(&'static str, &'static str)>,
    }

    impl Facts for Fixed {
        fn is_member(&mut self, role: &str, group: &str) -> bool {
            role == group || self.members.iter().any(|&(r, g)| r == role && g == group)
        }
    }

    fn facts() -> Fixed {
        Fixed { members: vec![("alice", "analysts")] }
    }

    fn rule(line: i32, t: &str, db: &str, role: &str, addr: Option<(&str, &str)>, method: &str) -> Rule {
        Rule {
            line,
            conn_type: t.into(),
            databases: db.split(',').map(String::from).collect(),
            roles: role.split(',').map(String::from).collect(),
            address: addr.map(|a| a.0.into()),
            netmask: addr.and_then(|a| (!a.1.is_empty()).then(|| a.1.into())),
            method: method.into(),
        }
    }

    fn login<'a>(addr: &str, tls: bool, db: &'a str, role: &'a str) -> Login<'a> {
        Login { addr: addr.parse().unwrap(), tls, database: db, role }
    }

    fn method(v: Verdict) -> String {
        match v {
            Verdict::Method { method, .. } => method,
            other => format!("{other:?}"),
        }
    }

    #[test]
    fn first_matching_line_decides_in_file_order() {
        let rules = vec![
            rule(1, "local", "all", "all", None, "trust"),
            rule(2, "host", "sales", "bob", Some(("127.0.0.1", "255.255.255.255")), "reject"),
            rule(3, "host", "all", "all", Some(("127.0.0.0", "255.0.0.0")), "scram-sha-256"),
            rule(4, "host", "all", "all", Some(("0.0.0.0", "0.0.0.0")), "md5"),
        ];
        let f = &mut facts();
        assert_eq!(method(judge(&rules, &login("127.0.0.1", false, "sales", "bob"), f)), "reject");
        assert_eq!(method(judge(&rules, &login("127.0.0.1", false, "sales", "carol"), f)), "scram-sha-256");
        assert_eq!(method(judge(&rules, &login("192.168.1.9", false, "sales", "bob"), f)), "md5");
        assert_eq!(judge(&rules[..2], &login("192.168.1.9", false, "x", "y"), f), Verdict::NoEntry);
    }

    #[test]
    fn tls_selects_hostssl_and_hostnossl() {
        let rules = vec![
            rule(1, "hostssl", "all", "all", Some(("all", "")), "scram-sha-256"),
            rule(2, "hostnossl", "all", "all", Some(("all", "")), "reject"),
        ];
        let f = &mut facts();
        assert_eq!(method(judge(&rules, &login("::1", true, "d", "r"), f)), "scram-sha-256");
        assert_eq!(method(judge(&rules, &login("::1", false, "d", "r"), f)), "reject");
        // No GSSAPI encryption: hostgssenc never matches, hostnogssenc always can.
        let g = vec![
            rule(1, "hostgssenc", "all", "all", Some(("all", "")), "trust"),
            rule(2, "hostnogssenc", "all", "all", Some(("all", "")), "password"),
        ];
        assert_eq!(method(judge(&g, &login("::1", false, "d", "r"), f)), "password");
    }

    #[test]
    fn databases_and_roles_keywords() {
        let f = &mut facts();
        let same = vec![rule(1, "host", "sameuser", "all", Some(("all", "")), "trust")];
        assert_eq!(method(judge(&same, &login("1.2.3.4", false, "bob", "bob"), f)), "trust");
        assert_eq!(judge(&same, &login("1.2.3.4", false, "db", "bob"), f), Verdict::NoEntry);
        let group = vec![rule(1, "host", "all", "+analysts", Some(("all", "")), "md5")];
        assert_eq!(method(judge(&group, &login("1.2.3.4", false, "d", "alice"), f)), "md5");
        assert_eq!(judge(&group, &login("1.2.3.4", false, "d", "bob"), f), Verdict::NoEntry);
        let samerole = vec![rule(1, "host", "samerole", "all", Some(("all", "")), "md5")];
        assert_eq!(method(judge(&samerole, &login("1.2.3.4", false, "analysts", "alice"), f)), "md5");
        let repl = vec![rule(1, "host", "replication", "all", Some(("all", "")), "trust")];
        assert_eq!(judge(&repl, &login("1.2.3.4", false, "replication", "r"), f), Verdict::NoEntry);
        let list = vec![rule(1, "host", "a,b", "x,y", Some(("all", "")), "password")];
        assert_eq!(method(judge(&list, &login("1.2.3.4", false, "b", "y"), f)), "password");
    }

    #[test]
    fn addresses_masks_and_families() {
        let f = &mut facts();
        let v6 = vec![rule(
            1,
            "host",
            "all",
            "all",
            Some(("::1", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff")),
            "trust",
        )];
        assert_eq!(method(judge(&v6, &login("::1", false, "d", "r"), f)), "trust");
        assert_eq!(judge(&v6, &login("127.0.0.1", false, "d", "r"), f), Verdict::NoEntry);
        // An IPv4 client on an IPv6 socket is judged as IPv4.
        let v4 = vec![rule(1, "host", "all", "all", Some(("127.0.0.1", "255.255.255.255")), "trust")];
        assert_eq!(method(judge(&v4, &login("::ffff:127.0.0.1", false, "d", "r"), f)), "trust");
        let net = vec![rule(1, "host", "all", "all", Some(("10.1.0.0", "255.255.0.0")), "trust")];
        assert_eq!(method(judge(&net, &login("10.1.200.7", false, "d", "r"), f)), "trust");
        assert_eq!(judge(&net, &login("10.2.0.1", false, "d", "r"), f), Verdict::NoEntry);
    }

    #[test]
    fn lines_it_cannot_judge_refuse_rather_than_skip() {
        let f = &mut facts();
        let rules = vec![
            rule(1, "host", "/^sales", "all", Some(("all", "")), "trust"),
            rule(2, "host", "all", "all", Some(("all", "")), "reject"),
        ];
        assert!(matches!(
            judge(&rules, &login("1.2.3.4", false, "x", "y"), f),
            Verdict::Unsupported { line: 1, .. }
        ));
        for addr in ["db.example.com", "samehost", "samenet"] {
            let named = vec![rule(1, "host", "all", "all", Some((addr, "")), "trust")];
            assert!(matches!(
                judge(&named, &login("1.2.3.4", false, "x", "y"), f),
                Verdict::Unsupported { line: 1, .. }
            ));
        }
        // A line of another connection type is never reached.
        let local = vec![rule(1, "local", "/^x", "all", None, "trust")];
        assert_eq!(judge(&local, &login("1.2.3.4", false, "x", "y"), f), Verdict::NoEntry);
    }
}
