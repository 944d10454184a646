use std::time::Instant;
#[test]
fn bench() {
    let root = std::path::Path::new("/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/syn-3.0.10/src");
    let mut sources = Vec::new();
    for e in std::fs::read_dir(root).unwrap().flatten() {
        if e.path().extension().is_some_and(|x| x == "rs") { sources.push(std::fs::read_to_string(e.path()).unwrap()); }
    }
    let bytes: usize = sources.iter().map(|s| s.len()).sum();
    println!("{} files {} bytes", sources.len(), bytes);
    let t = Instant::now();
    for s in &sources { let _ = s.parse::<proc_macro2::TokenStream>().unwrap(); proc_macro2::extra::invalidate_current_thread_spans(); }
    println!("lex {:?}", t.elapsed());
    let t = Instant::now();
    for s in &sources { let _ = syn::parse_file(s).unwrap(); proc_macro2::extra::invalidate_current_thread_spans(); }
    println!("parse {:?}", t.elapsed());
    let t = Instant::now();
    for s in &sources { let _ = mutators::rust::executable_lines(s).unwrap(); }
    println!("executable_lines {:?}", t.elapsed());
    let t = Instant::now();
    let mut n = 0;
    for s in &sources { let lines: Vec<usize> = (1..=s.lines().count()).collect(); n += mutators::rust::mutate(s, &lines).unwrap().mutants.len(); }
    println!("mutate all lines {:?} {n}", t.elapsed());
    let t = Instant::now();
    for s in &sources { let _ = mutators::rust::mutate(s, &[10]).unwrap(); }
    println!("mutate one line {:?}", t.elapsed());
}
