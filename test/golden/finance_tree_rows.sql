select exists (
       select 1 from projects cp where cp.team_id = :teamId and cp.id = :projectId and (exists (
       select 1 from project_figures cf
       where cf.team_id = cp.team_id and cf.project_id = cp.id and cf.revision = cp.revision
         and cf.day = (cast(:now as timestamptz) at time zone cp.time_zone)::date and cf.calculator_version = cast(:calculatorVersion as integer))
     and not exists (
       select 1 from stale_tasks sm where sm.team_id = cp.team_id and sm.project_id = cp.id)
     and not exists (select 1 from stale_inputs si where si.team_id = cp.team_id and si.project_id = cp.id))) as current, 0 as position, null as id, null as name, null as parent_task_id, null as billable,
            null as status, null as priority, null as phase, null as sub_tasks_count,
            null as estimated_hours, null as logged_hours, null as estimated_labor_cost, null as actual_labor_cost, null as fixed_cost, null as total_estimated_cost, null as total_actual_cost, null as variance, null as estimated_revenue, null as actual_revenue, null as estimated_margin, null as actual_margin, null as has_missing_rates
     union all
     select null, row_number() over (order by t.created_at, t.id), t.id, t.name, t.parent_task_id, t.billable, t.status, t.priority, t.phase,
            f.sub_tasks, trim_scale(f.estimated_hours) as estimated_hours, trim_scale(f.logged_hours) as logged_hours, trim_scale(f.estimated_labor_cost) as estimated_labor_cost, trim_scale(f.actual_labor_cost) as actual_labor_cost, trim_scale(f.fixed_cost) as fixed_cost, trim_scale(f.total_estimated_cost) as total_estimated_cost, trim_scale(f.total_actual_cost) as total_actual_cost, trim_scale(f.variance) as variance, trim_scale(f.estimated_revenue) as estimated_revenue, trim_scale(f.actual_revenue) as actual_revenue, trim_scale(f.estimated_margin) as estimated_margin, trim_scale(f.actual_margin) as actual_margin, trim_scale(f.has_missing_rates) as has_missing_rates
       from tasks t
     join task_labor l on l.team_id = t.team_id and l.project_id = t.project_id and l.task_id = t.id
     cross join lateral (
       select case :filter when 'billable' then l.tree_billable_tasks when 'non-billable' then l.tree_non_billable_tasks
              else l.tree_billable_tasks + l.tree_non_billable_tasks end as tasks,
              case :filter when 'billable' then l.tree_billable_estimated_hours when 'non-billable' then l.tree_non_billable_estimated_hours
              else l.tree_billable_estimated_hours + l.tree_non_billable_estimated_hours end as estimated_hours,
              case :filter when 'billable' then l.tree_billable_logged_hours when 'non-billable' then l.tree_non_billable_logged_hours
              else l.tree_billable_logged_hours + l.tree_non_billable_logged_hours end as logged_hours,
              case :filter when 'billable' then l.tree_billable_estimated_labor_cost when 'non-billable' then l.tree_non_billable_estimated_labor_cost
              else l.tree_billable_estimated_labor_cost + l.tree_non_billable_estimated_labor_cost end as estimated_labor_cost,
              case :filter when 'billable' then l.tree_billable_actual_labor_cost when 'non-billable' then l.tree_non_billable_actual_labor_cost
              else l.tree_billable_actual_labor_cost + l.tree_non_billable_actual_labor_cost end as actual_labor_cost,
              case :filter when 'billable' then l.tree_billable_fixed_cost when 'non-billable' then l.tree_non_billable_fixed_cost
              else l.tree_billable_fixed_cost + l.tree_non_billable_fixed_cost end as fixed_cost,
              case :filter when 'billable' then l.tree_billable_total_estimated_cost when 'non-billable' then l.tree_non_billable_total_estimated_cost
              else l.tree_billable_total_estimated_cost + l.tree_non_billable_total_estimated_cost end as total_estimated_cost,
              case :filter when 'billable' then l.tree_billable_total_actual_cost when 'non-billable' then l.tree_non_billable_total_actual_cost
              else l.tree_billable_total_actual_cost + l.tree_non_billable_total_actual_cost end as total_actual_cost,
              case :filter when 'billable' then l.tree_billable_variance when 'non-billable' then l.tree_non_billable_variance
              else l.tree_billable_variance + l.tree_non_billable_variance end as variance,
              case :filter when 'billable' then l.tree_billable_estimated_revenue when 'non-billable' then l.tree_non_billable_estimated_revenue
              else l.tree_billable_estimated_revenue + l.tree_non_billable_estimated_revenue end as estimated_revenue,
              case :filter when 'billable' then l.tree_billable_actual_revenue when 'non-billable' then l.tree_non_billable_actual_revenue
              else l.tree_billable_actual_revenue + l.tree_non_billable_actual_revenue end as actual_revenue,
              case :filter when 'billable' then l.tree_billable_estimated_margin when 'non-billable' then l.tree_non_billable_estimated_margin
              else l.tree_billable_estimated_margin + l.tree_non_billable_estimated_margin end as estimated_margin,
              case :filter when 'billable' then l.tree_billable_actual_margin when 'non-billable' then l.tree_non_billable_actual_margin
              else l.tree_billable_actual_margin + l.tree_non_billable_actual_margin end as actual_margin,
              case :filter when 'billable' then l.tree_billable_has_missing_rates when 'non-billable' then l.tree_non_billable_has_missing_rates
              else l.tree_billable_has_missing_rates + l.tree_non_billable_has_missing_rates end as has_missing_rates,
              case :filter when 'billable' then l.children_billable when 'non-billable' then l.children_non_billable
                else l.children end as sub_tasks
     ) f
     where t.team_id = :teamId and t.project_id = :projectId and t.archived_at is null
       and (cast(:allLevels as boolean) or t.parent_task_id is not distinct from cast(:parentId as uuid))
       and f.tasks > 0
     order by position
