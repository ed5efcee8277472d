select exists (
       select 1 from projects cp where cp.team_id = :teamId and cp.id = :projectId and (exists (
       select 1 from project_figures cf
       where cf.team_id = cp.team_id and cf.project_id = cp.id and cf.revision = cp.revision
         and cf.day = (cast(:now as timestamptz) at time zone cp.time_zone)::date and cf.calculator_version = cast(:calculatorVersion as integer))
     and not exists (
       select 1 from stale_tasks sm where sm.team_id = cp.team_id and sm.project_id = cp.id)
     and not exists (select 1 from stale_inputs si where si.team_id = cp.team_id and si.project_id = cp.id))) as current, own.* from (select 1) one
     left join (
       select t.id as task_id, t.estimated_hours::text as estimated_hours, l.logged_hours::text as logged_hours, l.estimated_labor_cost::text as estimated_labor_cost, l.actual_labor_cost::text as actual_labor_cost, t.fixed_cost::text as fixed_cost, l.total_estimated_cost::text as total_estimated_cost, l.total_actual_cost::text as total_actual_cost, l.variance::text as variance, l.estimated_revenue::text as estimated_revenue, l.actual_revenue::text as actual_revenue, l.estimated_margin::text as estimated_margin, l.actual_margin::text as actual_margin, l.has_missing_rates::text as has_missing_rates
       from tasks t join task_labor l on l.team_id = t.team_id and l.task_id = t.id
       where t.team_id = :teamId and t.project_id = :projectId and t.archived_at is null
         and t.id = any(string_to_array(:taskIds, ',')::uuid[])
     ) own on true
