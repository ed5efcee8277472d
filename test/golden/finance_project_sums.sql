select trim_scale(coalesce(sum(l.tree_billable_estimated_hours + l.tree_non_billable_estimated_hours), 0))::text as estimated_hours, trim_scale(coalesce(sum(l.tree_billable_logged_hours + l.tree_non_billable_logged_hours), 0))::text as logged_hours, trim_scale(coalesce(sum(l.tree_billable_estimated_labor_cost + l.tree_non_billable_estimated_labor_cost), 0))::text as estimated_labor_cost, trim_scale(coalesce(sum(l.tree_billable_actual_labor_cost + l.tree_non_billable_actual_labor_cost), 0))::text as actual_labor_cost, trim_scale(coalesce(sum(l.tree_billable_fixed_cost + l.tree_non_billable_fixed_cost), 0))::text as fixed_cost, trim_scale(coalesce(sum(l.tree_billable_total_estimated_cost + l.tree_non_billable_total_estimated_cost), 0))::text as total_estimated_cost, trim_scale(coalesce(sum(l.tree_billable_total_actual_cost + l.tree_non_billable_total_actual_cost), 0))::text as total_actual_cost, trim_scale(coalesce(sum(l.tree_billable_variance + l.tree_non_billable_variance), 0))::text as variance, exists (
       select 1 from projects cp where cp.team_id = :teamId and cp.id = :projectId and (exists (
       select 1 from project_figures cf
       where cf.team_id = cp.team_id and cf.project_id = cp.id and cf.revision = cp.revision
         and cf.day = (cast(:now as timestamptz) at time zone cp.time_zone)::date and cf.calculator_version = cast(:calculatorVersion as integer))
     and not exists (
       select 1 from stale_tasks sm where sm.team_id = cp.team_id and sm.project_id = cp.id)
     and not exists (select 1 from stale_inputs si where si.team_id = cp.team_id and si.project_id = cp.id))) as current
     from tasks t join task_labor l on l.team_id = t.team_id and l.task_id = t.id
     where t.team_id = :teamId and t.project_id = :projectId and t.parent_task_id is null and t.archived_at is null
