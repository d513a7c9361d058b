//! Tables found in a page's paragraphs: paragraphs laid out as a grid. A
//! row is two or more paragraphs side by side whose first lines share a
//! baseline; consecutive rows (no other paragraph between them) whose
//! cells each fall under one column of the first row's make a table of at
//! least two rows. Text in two columns rarely starts two paragraphs on the
//! same baseline twice running, so columns of text stay text.

/// A paragraph as the grid sees it: its left and right edges, and its
/// first line's baseline.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Cell {
    pub left: f32,
    pub right: f32,
    pub baseline: f32,
}

/// A table: its columns' left and right edges, and its rows, each cell an
/// index of the paragraphs given under the column it falls in.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Grid {
    pub columns: Vec<(f32, f32)>,
    pub rows: Vec<Vec<Option<usize>>>,
}

/// How far apart baselines of one row may be, in points.
const SAME_BASELINE: f32 = 2.0;

/// The tables among `cells` (a page's paragraphs).
pub(crate) fn tables(cells: &[Cell]) -> Vec<Grid> {
    // Paragraphs top to bottom, grouped by baseline.
    let mut order: Vec<usize> = (0..cells.len()).collect();
    order.sort_by(|&a, &b| cells[b].baseline.total_cmp(&cells[a].baseline));
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for i in order {
        match groups.last_mut() {
            Some(group)
                if (cells[group[0]].baseline - cells[i].baseline).abs() <= SAME_BASELINE =>
            {
                group.push(i);
            }
            _ => groups.push(vec![i]),
        }
    }
    let mut found = Vec::new();
    let mut current: Option<Grid> = None;
    for mut group in groups {
        group.sort_by(|&a, &b| cells[a].left.total_cmp(&cells[b].left));
        let side_by_side = group.len() >= 2
            && group
                .windows(2)
                .all(|w| cells[w[0]].right < cells[w[1]].left);
        if !side_by_side {
            found.extend(current.take().filter(|g| g.rows.len() >= 2));
            continue;
        }
        if let Some(grid) = current.as_mut()
            && let Some(row) = fit(grid, &group, cells)
        {
            grid.rows.push(row);
            continue;
        }
        found.extend(current.take().filter(|g| g.rows.len() >= 2));
        current = Some(Grid {
            columns: group
                .iter()
                .map(|&i| (cells[i].left, cells[i].right))
                .collect(),
            rows: vec![group.iter().map(|&i| Some(i)).collect()],
        });
    }
    found.extend(current.filter(|g| g.rows.len() >= 2));
    found
}

/// The row `group` makes under `grid`'s columns (widening them to its
/// cells); `None` when a cell falls under no column, or two under one.
fn fit(grid: &mut Grid, group: &[usize], cells: &[Cell]) -> Option<Vec<Option<usize>>> {
    let mut row = vec![None; grid.columns.len()];
    for &i in group {
        let cell = cells[i];
        let mut under = grid
            .columns
            .iter()
            .enumerate()
            .filter(|(_, (left, right))| cell.left < *right && *left < cell.right);
        let (column, _) = under.next()?;
        if under.next().is_some() || row[column].is_some() {
            return None;
        }
        row[column] = Some(i);
    }
    for (column, i) in row.iter().enumerate() {
        if let Some(i) = i {
            let (left, right) = &mut grid.columns[column];
            *left = left.min(cells[*i].left);
            *right = right.max(cells[*i].right);
        }
    }
    Some(row)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(left: f32, right: f32, baseline: f32) -> Cell {
        Cell {
            left,
            right,
            baseline,
        }
    }

    #[test]
    fn rows_of_side_by_side_paragraphs_make_a_table() {
        let cells = [
            cell(72.0, 300.0, 750.0), // a paragraph above
            cell(72.0, 150.0, 700.0),
            cell(200.0, 260.0, 700.5),
            cell(72.0, 140.0, 680.0),
            cell(210.0, 290.0, 680.0),
            cell(72.0, 130.0, 660.0), // alone on its baseline: no row
            cell(72.0, 300.0, 600.0), // a paragraph below
        ];
        assert_eq!(
            tables(&cells),
            [Grid {
                columns: vec![(72.0, 150.0), (200.0, 290.0)],
                rows: vec![vec![Some(1), Some(2)], vec![Some(3), Some(4)]],
            }]
        );
    }

    #[test]
    fn two_columns_of_text_are_no_table() {
        let cells = [
            cell(72.0, 290.0, 700.0),
            cell(310.0, 540.0, 700.0),
            cell(72.0, 290.0, 640.0),
            cell(310.0, 540.0, 610.0),
        ];
        assert!(tables(&cells).is_empty());
    }
}
