//! The vector top-k scan ([`Plan::VectorTopK`]): scores every live row of one node table with
//! an array distance function against a constant vector and keeps the best `skip + limit`,
//! without sorting. Stored rows of a contiguous vector column are scored in place, in morsels
//! of [`MORSEL_ROWS`] rows handed to the query's threads, each thread with its own bounded
//! heap; the heaps are merged at the end. Rows the delta appended or updated are scored from
//! their values. The answer is the row path's (`ORDER BY` sorts with NULL largest and keeps
//! scan order among equal scores): ties go to the smaller node offset.
//!
//! [`Plan::VectorTopK`]: warren_planner::plan::Plan::VectorTopK

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};

use warren_common::types::LogicalType;
use warren_common::value::{NodeValue, Value};
use warren_common::{InternalId, Result};
use warren_planner::functions::ScalarFunction;
use warren_planner::plan::VectorTopK;
use warren_storage::NodeTable;
use warren_vector::quantized::{self, Int8Block};
use warren_vector::topk::TopK;

use super::{BoxedOperator, Operator, Row};
use crate::context::{ExecContext, Interrupt};
use crate::eval::array_functions::{apply_f32, apply_f64};
use crate::eval::Evaluator;

/// Rows per unit of parallel work: large enough to amortize the hand-out, small enough to
/// balance two threads over a few thousand rows.
const MORSEL_ROWS: usize = 8192;

/// A score's place in the order: ascending by `(is NULL, score)`, scores by IEEE total order
/// (the row path's `Value::total_cmp`). A descending order uses `(not NULL, -score)`, since
/// negation exactly reverses the total order.
#[derive(Clone, Copy, Debug)]
struct Rank {
    last: bool,
    score: f64,
}

impl Rank {
    #[inline]
    fn new(score: Option<f64>, descending: bool) -> Self {
        match (score, descending) {
            (None, false) => Rank {
                last: true,
                score: 0.0,
            },
            (None, true) => Rank {
                last: false,
                score: 0.0,
            },
            (Some(s), false) => Rank {
                last: false,
                score: s,
            },
            (Some(s), true) => Rank {
                last: true,
                score: -s,
            },
        }
    }
}

impl Ord for Rank {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.last
            .cmp(&other.last)
            .then(self.score.total_cmp(&other.score))
    }
}

impl PartialOrd for Rank {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Rank {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for Rank {}

/// The query vector in the column's precision (`None`: the query is NULL, every score is).
enum Query {
    F32(Option<Vec<f32>>),
    F64(Option<Vec<f64>>),
}

pub struct VectorTopKScan {
    input: BoxedOperator,
    plan: VectorTopK,
    output: Option<std::vec::IntoIter<Row>>,
}

impl VectorTopKScan {
    pub fn new(input: BoxedOperator, plan: VectorTopK) -> Self {
        Self {
            input,
            plan,
            output: None,
        }
    }

    fn select(&self, ctx: &ExecContext, base: &Row) -> Result<Vec<Row>> {
        let plan = &self.plan;
        // LIMIT first: a LIMIT 0 over a sort reads neither its input nor the SKIP count.
        let limit = super::simple::row_count(&plan.limit, ctx)?;
        if limit == 0 {
            return Ok(Vec::new());
        }
        let skip = match &plan.skip {
            Some(skip) => super::simple::row_count(skip, ctx)?,
            None => 0,
        };
        let kept = usize::try_from(skip.saturating_add(limit)).unwrap_or(usize::MAX);
        let snapshot = ctx.snapshot();
        let table = snapshot.node_table(plan.table);
        // The deletion bitmap and the vector column are read whole.
        table.try_verify_deleted()?;
        table.column(plan.column).try_verify()?;
        let evaluator = Evaluator::new(&snapshot, ctx);
        let query = self.query(&evaluator.eval(&plan.query, base)?)?;
        let passes = self.filter_mask(ctx, table, base)?;
        let mut top = TopK::new(kept.min(table.num_rows() as usize));
        let from_values = self.rows_from_values(table);
        self.score_stored(
            ctx,
            table,
            &query,
            passes.as_deref(),
            &from_values,
            &mut top,
        )?;
        for row in from_values {
            ctx.tick()?;
            if table.is_deleted(row) || passes.as_ref().is_some_and(|p| !p[row as usize]) {
                continue;
            }
            let value = table.try_value(row, plan.column)?;
            top.push(
                Rank::new(self.score_value(&value, &query)?, plan.descending),
                row,
            );
        }
        let skip = usize::try_from(skip).unwrap_or(usize::MAX);
        Ok(top
            .into_sorted()
            .into_iter()
            .skip(skip)
            .map(|(_, offset)| {
                let mut row = base.clone();
                row[plan.slot] = Value::Node(NodeValue {
                    id: InternalId::new(plan.table, offset),
                    projection: None,
                });
                row
            })
            .collect())
    }

    /// The query vector, cast to the function's array type (Kùzu's error for a wrong length).
    fn query(&self, value: &Value) -> Result<Query> {
        let LogicalType::Array(element, size) = &self.plan.array_type else {
            unreachable!("the planner gives a vector top-k an ARRAY type")
        };
        let elements = if value.is_null() {
            None
        } else {
            Some(crate::eval::array_functions::elements(
                value,
                *size as usize,
            )?)
        };
        Ok(match **element {
            LogicalType::Float => {
                Query::F32(elements.map(|v| v.into_iter().map(|x| x as f32).collect()))
            }
            _ => Query::F64(elements),
        })
    }

    /// For a scan with a filter, which rows pass it (evaluated here, on this thread).
    fn filter_mask(
        &self,
        ctx: &ExecContext,
        table: &NodeTable,
        base: &Row,
    ) -> Result<Option<Vec<bool>>> {
        let Some(filter) = &self.plan.filter else {
            return Ok(None);
        };
        let snapshot = ctx.snapshot();
        let evaluator = Evaluator::new(&snapshot, ctx);
        let mut row = base.clone();
        let mut passes = vec![false; table.num_rows() as usize];
        for (offset, pass) in passes.iter_mut().enumerate() {
            ctx.tick()?;
            if table.is_deleted(offset as u64) {
                continue;
            }
            row[self.plan.slot] = Value::Node(NodeValue {
                id: InternalId::new(self.plan.table, offset as u64),
                projection: None,
            });
            *pass = evaluator.test(filter, &row)?;
        }
        Ok(Some(passes))
    }

    /// Rows whose vector is read from values: appended rows, stored rows with an update of
    /// the column, and every row when the column is not contiguous (or not in the query's
    /// precision).
    fn rows_from_values(&self, table: &NodeTable) -> Vec<u64> {
        if !self.is_contiguous(table) {
            return (0..table.num_rows()).collect();
        }
        let column = self.plan.column as u32;
        let mut updated: Vec<u64> = table
            .delta()
            .updates
            .keys()
            .filter(|(_, property)| *property == column)
            .map(|(row, _)| *row)
            .collect();
        updated.sort_unstable();
        updated.extend(table.num_stored_rows()..table.num_rows());
        updated
    }

    fn is_contiguous(&self, table: &NodeTable) -> bool {
        let LogicalType::Array(element, size) = &self.plan.array_type else {
            return false;
        };
        let column = table.column(self.plan.column);
        match **element {
            LogicalType::Float => column
                .vector_f32()
                .is_some_and(|(_, n)| n == *size as usize),
            LogicalType::Double => column
                .vector_f64()
                .is_some_and(|(_, n)| n == *size as usize),
            _ => false,
        }
    }

    fn score_value(&self, value: &Value, query: &Query) -> Result<Option<f64>> {
        if value.is_null() {
            return Ok(None);
        }
        let LogicalType::Array(_, size) = &self.plan.array_type else {
            unreachable!("the planner gives a vector top-k an ARRAY type")
        };
        let elements = crate::eval::array_functions::elements(value, *size as usize)?;
        Ok(match query {
            Query::F32(Some(q)) => {
                let v: Vec<f32> = elements.iter().map(|&x| x as f32).collect();
                Some(f64::from(apply_f32(self.plan.function, &v, q)))
            }
            Query::F64(Some(q)) => Some(apply_f64(self.plan.function, &elements, q)),
            Query::F32(None) | Query::F64(None) => None,
        })
    }

    /// Scores the stored rows of a contiguous column in parallel into `top`.
    fn score_stored(
        &self,
        ctx: &ExecContext,
        table: &NodeTable,
        query: &Query,
        passes: Option<&[bool]>,
        from_values: &[u64],
        top: &mut TopK<Rank>,
    ) -> Result<()> {
        if !self.is_contiguous(table) {
            return Ok(());
        }
        let column = table.column(self.plan.column);
        let skipped: HashSet<u64> = from_values.iter().copied().collect();
        let scan = StoredScan {
            table,
            column_nulls: column.has_nulls().then_some(column),
            passes,
            skipped: &skipped,
            descending: self.plan.descending,
            rows: table.num_stored_rows() as usize,
            k: top.k(),
            interrupt: &ctx.interrupt,
        };
        let threads = ctx.threads();
        let merged = match query {
            Query::F32(q) => {
                let (block, dim) = column.vector_f32().expect("checked contiguous");
                if let Some(q) = q.as_deref().filter(|q| self.filters_with_a_copy(q)) {
                    if let Some(copy) = ctx.vector_copies.copy_for(column, block, dim, threads) {
                        top.merge(scan.run_int8(threads, &copy, block, q)?);
                        return Ok(());
                    }
                }
                let kernel = f32_kernel(self.plan.function);
                let score = move |row: &[f32], q: &[f32]| f64::from(kernel(row, q));
                scan.run(threads, dim, block, q.as_deref(), score)?
            }
            Query::F64(q) => {
                let (block, dim) = column.vector_f64().expect("checked contiguous");
                let kernel = f64_kernel(self.plan.function);
                scan.run(threads, dim, block, q.as_deref(), kernel)?
            }
        };
        top.merge(merged);
        Ok(())
    }
}

impl VectorTopKScan {
    /// Whether the int8 copy can answer this scan exactly: the largest cosine similarities
    /// first, against a query the copy's bound describes (`warren_vector::quantized`).
    fn filters_with_a_copy(&self, query: &[f32]) -> bool {
        self.plan.function == ScalarFunction::ArrayCosineSimilarity
            && self.plan.descending
            && quantized::describes_query(query)
    }
}

/// The process's kernel for `function` over FLOAT vectors, chosen once per scan (the same
/// kernels `apply_f32` calls row by row, so the scores are the same).
fn f32_kernel(function: ScalarFunction) -> fn(&[f32], &[f32]) -> f32 {
    let kernels = warren_vector::distance::kernels();
    match function {
        ScalarFunction::ArrayCosineSimilarity => kernels.cosine_similarity_f32,
        ScalarFunction::ArrayInnerProduct => kernels.inner_product_f32,
        ScalarFunction::ArraySquaredDistance => kernels.squared_distance_f32,
        ScalarFunction::ArrayDistance => |a, b| apply_f32(ScalarFunction::ArrayDistance, a, b),
        other => unreachable!("{other:?} is not an array distance function"),
    }
}

/// [`f32_kernel`] over DOUBLE vectors.
fn f64_kernel(function: ScalarFunction) -> fn(&[f64], &[f64]) -> f64 {
    let kernels = warren_vector::distance::kernels();
    match function {
        ScalarFunction::ArrayCosineSimilarity => kernels.cosine_similarity_f64,
        ScalarFunction::ArrayInnerProduct => kernels.inner_product_f64,
        ScalarFunction::ArraySquaredDistance => kernels.squared_distance_f64,
        ScalarFunction::ArrayDistance => |a, b| apply_f64(ScalarFunction::ArrayDistance, a, b),
        other => unreachable!("{other:?} is not an array distance function"),
    }
}

/// What the scoring threads share.
struct StoredScan<'a> {
    table: &'a NodeTable,
    /// The column, when it has NULL rows to check.
    column_nulls: Option<&'a warren_storage::column::Column>,
    passes: Option<&'a [bool]>,
    /// Stored rows scored from their values instead.
    skipped: &'a HashSet<u64>,
    descending: bool,
    rows: usize,
    k: usize,
    interrupt: &'a Interrupt,
}

impl StoredScan<'_> {
    /// Scores rows `0..rows` of `block` (`dim` elements a row) on up to `threads` threads,
    /// morsel by morsel, and merges the threads' heaps.
    fn run<T: Copy + Sync, F: Fn(&[T], &[T]) -> f64 + Sync>(
        &self,
        threads: usize,
        dim: usize,
        block: &[T],
        query: Option<&[T]>,
        score: F,
    ) -> Result<TopK<Rank>> {
        assert!(
            block.len() >= self.rows * dim,
            "vector block shorter than the table"
        );
        let next_morsel = AtomicUsize::new(0);
        let morsels = self.rows.div_ceil(MORSEL_ROWS);
        let threads = threads.clamp(1, morsels.max(1));
        let every_row = self.every_row_wanted();
        let work = || -> Result<TopK<Rank>> {
            let mut top = TopK::new(self.k);
            loop {
                let morsel = next_morsel.fetch_add(1, Ordering::Relaxed);
                if morsel >= morsels {
                    return Ok(top);
                }
                self.interrupt.check()?;
                let start = morsel * MORSEL_ROWS;
                let end = (start + MORSEL_ROWS).min(self.rows);
                match query {
                    // Nothing to skip: the rows one after the other, no per-row checks.
                    Some(q) if every_row => {
                        let rows = block[start * dim..end * dim].chunks_exact(dim);
                        for (row, values) in (start..end).zip(rows) {
                            warren_vector::prefetch::scan_ahead(values);
                            let rank = Rank::new(Some(score(values, q)), self.descending);
                            if top.admits(&rank, row as u64) {
                                top.push(rank, row as u64);
                            }
                        }
                    }
                    _ => {
                        for row in start..end {
                            if !self.wanted(row) {
                                continue;
                            }
                            let value = match query {
                                Some(q) if !self.is_null(row) => {
                                    Some(score(&block[row * dim..(row + 1) * dim], q))
                                }
                                _ => None,
                            };
                            let rank = Rank::new(value, self.descending);
                            if top.admits(&rank, row as u64) {
                                top.push(rank, row as u64);
                            }
                        }
                    }
                }
            }
        };
        let results: Vec<Result<TopK<Rank>>> = if threads == 1 {
            vec![work()]
        } else {
            std::thread::scope(|scope| {
                let workers: Vec<_> = (0..threads).map(|_| scope.spawn(work)).collect();
                workers
                    .into_iter()
                    .map(|w| w.join().expect("a vector scan thread panicked"))
                    .collect()
            })
        };
        let mut merged = TopK::new(self.k);
        for result in results {
            merged.merge(result?);
        }
        Ok(merged)
    }

    /// The scan of a `FLOAT[n]` block through its int8 copy (`copy`, built from `block`) for
    /// the largest cosine similarities: the same heap as [`StoredScan::run`] with a non-NULL
    /// query. NULL rows rank first (`ORDER BY ... DESC` puts NULL first); they are pushed here,
    /// and the copy scores the others.
    fn run_int8(
        &self,
        threads: usize,
        copy: &Int8Block,
        block: &[f32],
        query: &[f32],
    ) -> Result<TopK<Rank>> {
        assert!(self.descending, "the copy finds the largest similarities");
        assert!(copy.rows() >= self.rows, "a copy of the whole stored block");
        let mut top = TopK::new(self.k);
        if self.column_nulls.is_some() {
            for row in 0..self.rows {
                if self.wanted(row) && self.is_null(row) {
                    top.push(Rank::new(None, true), row as u64);
                }
            }
        }
        let stop = || self.interrupt.check().is_err();
        let found = if self.every_row_wanted() {
            // Only the rows past the stored ones are left out: no per-row lookups.
            let wanted = |row: usize| row < self.rows;
            quantized::cosine_top_k_where(copy, block, query, self.k, threads, wanted, stop)
        } else {
            let wanted = |row: usize| row < self.rows && self.wanted(row) && !self.is_null(row);
            quantized::cosine_top_k_where(copy, block, query, self.k, threads, wanted, stop)
        };
        let Some((found, _)) = found else {
            self.interrupt.check()?;
            unreachable!("a scan stops only when the query is interrupted")
        };
        for hit in found {
            top.push(
                Rank::new(Some(f64::from(hit.score)), true),
                u64::from(hit.row),
            );
        }
        Ok(top)
    }

    /// Whether every stored row is scored: none deleted, filtered out, read from values or
    /// NULL.
    fn every_row_wanted(&self) -> bool {
        self.table.deleted().is_none()
            && self.table.delta().deleted.is_empty()
            && self.passes.is_none()
            && self.skipped.is_empty()
            && self.column_nulls.is_none()
    }

    #[inline]
    fn wanted(&self, row: usize) -> bool {
        !self.table.is_deleted(row as u64)
            && self.passes.is_none_or(|p| p[row])
            && (self.skipped.is_empty() || !self.skipped.contains(&(row as u64)))
    }

    #[inline]
    fn is_null(&self, row: usize) -> bool {
        self.column_nulls.is_some_and(|c| c.is_null(row))
    }
}

impl Operator for VectorTopKScan {
    fn next(&mut self, ctx: &ExecContext) -> Result<Option<Row>> {
        if self.output.is_none() {
            let Some(base) = self.input.next(ctx)? else {
                return Ok(None);
            };
            let rows = self.select(ctx, &base)?;
            self.output = Some(rows.into_iter());
        }
        Ok(self.output.as_mut().and_then(Iterator::next))
    }
}
