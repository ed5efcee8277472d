with recursive scope (id) as (
        select id from tasks where team_id = :teamId and project_id = :projectId
          and id = any(string_to_array(:taskIds, ',')::uuid[]) and archived_at is null)
     select t.id, t.name, t.project_id, t.parent_task_id, t.billable, t.estimated_hours, t.fixed_cost,
            t.status, t.priority, t.phase, t.created_at, pricing.per_day, pricing.bills
     from tasks t join scope s on t.team_id = :teamId and t.id = s.id
     cross join (select case when p.rate_unit = 'day' then p.hours_per_day::text end as per_day,
              exists (select 1 from project_rate_cards c where c.team_id = p.team_id and c.project_id = p.id and c.bill_rate is not null)
              or exists (select 1 from project_member_rates r where r.team_id = p.team_id and r.project_id = p.id and r.bill_rate is not null) as bills
       from projects p where p.team_id = :teamId and p.id = :projectId) pricing
     order by t.created_at, t.id
